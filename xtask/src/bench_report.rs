//! The one benchmark report: every benchmark script writes its figures as JSON into
//! `target/bench/results/` (the `TETHER_BENCH_RESULTS` folder), and this gathers them into
//! `target/bench/report/report.md` (a table per benchmark, each figure beside its anchor from
//! the same run) and `report.svg` (a chart of how far ahead or behind each figure is).
//!
//! A results file is `{ benchmark, title, figures: [{ figure, unit, better, tether, anchor,
//! target }] }`, where `tether` and `anchor` are `{ median, min, max, runs }` (`anchor` also has a
//! `name`, and may be null when the figure has only a target). The scripts own what they measure;
//! this only lays it out, so it reads the files as plain JSON values and skips what it does not
//! understand, saying so.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::Value;

/// One measured side of a figure: Tether's, or its anchor's.
struct Side {
    name: String,
    median: f64,
    min: f64,
    max: f64,
    runs: u64,
}

struct Figure {
    benchmark: String,
    figure: String,
    unit: String,
    lower_is_better: bool,
    tether: Side,
    anchor: Option<Side>,
    target: Option<String>,
}

impl Figure {
    /// How many times better than its anchor Tether is (below 1: worse), if it has one.
    fn advantage(&self) -> Option<f64> {
        let anchor = self.anchor.as_ref()?;
        let (better, worse) = if self.lower_is_better {
            (anchor.median, self.tether.median)
        } else {
            (self.tether.median, anchor.median)
        };
        (better > 0.0 && worse > 0.0).then(|| better / worse)
    }
}

/// Reads every results file in `results_dir` and writes the report next to it, in
/// `report_dir`. Returns the Markdown report's path, or None when there were no results.
pub fn write(results_dir: &Path, report_dir: &Path) -> anyhow::Result<Option<PathBuf>> {
    let mut sections = Vec::new();
    let mut files: Vec<PathBuf> = match fs::read_dir(results_dir) {
        Ok(entries) => entries.filter_map(Result::ok).map(|entry| entry.path()).collect(),
        Err(_) => return Ok(None),
    };
    files.retain(|path| path.extension().is_some_and(|extension| extension == "json"));
    files.sort();
    for path in &files {
        let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        match serde_json::from_str::<Value>(&text) {
            Ok(value) => sections.push(read_results(&value)),
            Err(error) => eprintln!("bench: {} is not JSON ({error}); left out of the report", path.display()),
        }
    }
    if sections.is_empty() {
        return Ok(None);
    }
    fs::create_dir_all(report_dir).with_context(|| format!("creating {}", report_dir.display()))?;
    let markdown = report_dir.join("report.md");
    fs::write(&markdown, markdown_report(&sections)).with_context(|| format!("writing {}", markdown.display()))?;
    let chart = report_dir.join("report.svg");
    let figures: Vec<&Figure> = sections.iter().flat_map(|(_, figures)| figures).collect();
    fs::write(&chart, svg_chart(&figures)).with_context(|| format!("writing {}", chart.display()))?;
    Ok(Some(markdown))
}

/// A results file's title and the figures in it that could be read.
fn read_results(value: &Value) -> (String, Vec<Figure>) {
    let benchmark = value["benchmark"].as_str().unwrap_or("?").to_owned();
    let title = value["title"].as_str().unwrap_or(&benchmark).to_owned();
    let figures = value["figures"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|figure| {
            let read = read_figure(&benchmark, figure);
            if read.is_none() {
                eprintln!("bench: a figure of {benchmark} could not be read, left out of the report: {figure}");
            }
            read
        })
        .collect();
    (title, figures)
}

fn read_figure(benchmark: &str, figure: &Value) -> Option<Figure> {
    Some(Figure {
        benchmark: benchmark.to_owned(),
        figure: figure["figure"].as_str()?.to_owned(),
        unit: figure["unit"].as_str().unwrap_or("").to_owned(),
        lower_is_better: figure["better"].as_str() != Some("higher"),
        tether: read_side(&figure["tether"], "Tether")?,
        anchor: figure["anchor"]
            .as_object()
            .and_then(|_| read_side(&figure["anchor"], figure["anchor"]["name"].as_str().unwrap_or("anchor"))),
        target: figure["target"].as_str().map(str::to_owned),
    })
}

fn read_side(side: &Value, name: &str) -> Option<Side> {
    let median = side["median"].as_f64()?;
    Some(Side {
        name: name.to_owned(),
        median,
        min: side["min"].as_f64().unwrap_or(median),
        max: side["max"].as_f64().unwrap_or(median),
        runs: side["runs"].as_u64().unwrap_or(1),
    })
}

/// A number with as many decimals as it needs to show three significant digits or so.
fn number(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 100.0 || magnitude == 0.0 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else if magnitude >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

/// `median [min–max] unit` (the spread only when there were several runs).
fn measured(side: &Side, unit: &str) -> String {
    if side.runs > 1 {
        format!("{} [{}–{}] {unit} (n={})", number(side.median), number(side.min), number(side.max), side.runs)
    } else {
        format!("{} {unit}", number(side.median))
    }
}

fn markdown_report(sections: &[(String, Vec<Figure>)]) -> String {
    let mut out = String::from(
        "# Tether benchmarks\n\nEvery figure beside its anchor, measured in the same run: medians, with the \
         spread [min–max] and the number of runs. \"Ahead\" is how many times better Tether's median is \
         than its anchor's (below 1×: behind). Chart: report.svg.\n",
    );
    for (title, figures) in sections {
        write!(
            out,
            "\n## {title}\n\n| figure | Tether | anchor | anchor's figure | ahead | goal |\n|---|---|---|---|---|---|\n"
        )
        .expect("writing to a String cannot fail");
        for figure in figures {
            let (anchor_name, anchor_figure) = match &figure.anchor {
                Some(anchor) => (anchor.name.clone(), measured(anchor, &figure.unit)),
                None => ("—".to_owned(), "—".to_owned()),
            };
            let ahead = figure.advantage().map_or_else(|| "—".to_owned(), |ahead| format!("{}×", number(ahead)));
            writeln!(
                out,
                "| {} ({} is better) | {} | {anchor_name} | {anchor_figure} | {ahead} | {} |",
                figure.figure,
                if figure.lower_is_better { "lower" } else { "higher" },
                measured(&figure.tether, &figure.unit),
                figure.target.as_deref().unwrap_or("—"),
            )
            .expect("writing to a String cannot fail");
        }
    }
    out
}

/// A horizontal bar per figure with an anchor, on a log scale around "as good as the anchor":
/// right and green when Tether is ahead, left and red when behind.
fn svg_chart(figures: &[&Figure]) -> String {
    const ROW: f64 = 26.0;
    const LABEL_WIDTH: f64 = 560.0;
    const HALF: f64 = 260.0;
    /// The scale's ends: 100× ahead or behind (further is drawn at the end, the label says how far).
    const DECADES: f64 = 2.0;
    let charted: Vec<(&Figure, f64)> =
        figures.iter().filter_map(|figure| figure.advantage().map(|ahead| (*figure, ahead))).collect();
    let height = ROW * (charted.len() as f64 + 2.0);
    let width = LABEL_WIDTH + 2.0 * HALF + 90.0;
    let center = LABEL_WIDTH + HALF;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{center}\" y=\"16\" text-anchor=\"middle\">Tether vs anchor (log scale: ← behind · ahead →, ends at 100×)</text>\n\
         <line x1=\"{center}\" y1=\"{ROW}\" x2=\"{center}\" y2=\"{height}\" stroke=\"#444\"/>\n"
    );
    for (index, (figure, ahead)) in charted.iter().enumerate() {
        let y = ROW * (index as f64 + 1.0) + 4.0;
        let length = (ahead.log10() / DECADES).clamp(-1.0, 1.0) * HALF;
        let (x, colour) = if length >= 0.0 { (center, "#2e7d32") } else { (center + length, "#c62828") };
        let anchor = figure.anchor.as_ref().map_or("", |anchor| anchor.name.as_str());
        let label = escape(&format!("{}: {} vs {anchor}", figure.benchmark, figure.figure));
        writeln!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{label}</text>\n\
             <rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\"/>\n\
             <text x=\"{:.1}\" y=\"{}\">{}×</text>",
            LABEL_WIDTH - 8.0,
            y + 14.0,
            length.abs().max(1.0),
            ROW - 8.0,
            center + HALF + 6.0,
            y + 14.0,
            number(*ahead),
        )
        .expect("writing to a String cannot fail");
    }
    svg.push_str("</svg>\n");
    svg
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(better: &str, tether: f64, anchor: Option<f64>) -> Figure {
        let results = serde_json::json!({
            "figure": "f", "unit": "ms", "better": better,
            "tether": { "median": tether },
            "anchor": anchor.map(|median| serde_json::json!({ "name": "a", "median": median })),
        });
        read_figure("b", &results).expect("a readable figure")
    }

    #[test]
    fn ahead_means_better_whichever_way_the_figure_goes() {
        assert_eq!(figure("lower", 10.0, Some(40.0)).advantage(), Some(4.0), "a quarter of the anchor's time");
        assert_eq!(figure("higher", 10.0, Some(40.0)).advantage(), Some(0.25), "a quarter of the anchor's speed");
        assert_eq!(figure("lower", 10.0, None).advantage(), None, "no anchor, nothing to compare");
    }

    #[test]
    fn the_report_shows_each_figure_beside_its_anchor_and_skips_what_it_cannot_read() {
        let results = serde_json::json!({
            "benchmark": "footprint", "title": "Footprint",
            "figures": [
                { "figure": "activation", "unit": "ms", "better": "lower",
                  "tether": { "median": 93.1, "min": 71.9, "max": 159.0, "runs": 15 },
                  "anchor": { "name": "the ACP SDK", "median": 720.0, "min": 436.0, "max": 1002.0, "runs": 15 } },
                { "figure": "WASM", "unit": "KB", "better": "lower", "tether": { "median": 2110.0 },
                  "anchor": null, "target": "≤ 700 KB" },
                { "figure": "no median", "tether": {} }
            ]
        });
        let report = markdown_report(&[read_results(&results)]);
        let table: Vec<&str> =
            report.lines().filter(|line| line.starts_with("| ") && !line.starts_with("| figure")).collect();
        assert_eq!(
            table,
            [
                "| activation (lower is better) | 93.1 [71.9–159] ms (n=15) | the ACP SDK | 720 [436–1002] ms (n=15) | 7.73× | — |",
                "| WASM (lower is better) | 2110 KB | — | — | — | ≤ 700 KB |",
            ]
        );
    }
}
