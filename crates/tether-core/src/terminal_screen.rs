//! The last lines of a command's output as a terminal would show them, for the terminal card in
//! the chat.
//!
//! Output is text with escape sequences. The card is not a terminal emulator (the mirrored VS
//! Code terminal is the real one), but it must not show raw escapes either, and a progress bar
//! that redraws one line with `\r` must stay one line. So [`TerminalScreen`] interprets what
//! matters for a tail, with `vte`'s parser (the one Alacritty uses, which keeps its state across
//! chunks, so a sequence split between two reads is understood):
//!
//! - SGR (`ESC [ … m`): colours (16, 256, 24-bit), bold, dim, italic, underline, strikethrough,
//!   inverse;
//! - carriage return, backspace, tab, line feed; erase in line (`ESC [ K`); cursor left, right,
//!   column and up (within the lines kept); erase in display (`ESC [ 2 J` clears the lines).
//!
//! Everything else (cursor addressing by row, OSC titles and links, DCS, alternate screens) is
//! understood only well enough to be dropped. Memory is bounded: at most [`KEPT_LINES`] lines of
//! at most [`MAX_LINE_CHARS`] characters, and a huge chunk is interpreted only from near its end
//! (the lines before are counted, not drawn).
//!
//! What is deliberately absent: wide-character cell widths (a CJK character takes one column
//! here), and the screen's height: lines scroll off the top only when more than [`KEPT_LINES`]
//! have been written.

use std::collections::VecDeque;

use crate::thread::{TerminalColor, TerminalLine, TerminalSpan, TerminalStyle};

/// How many lines are kept (the view shows the last [`VIEW_LINES`] of them; the rest is room
/// for a cursor that moves up to redraw).
pub const KEPT_LINES: usize = 200;

/// How many lines the card shows.
pub const VIEW_LINES: usize = 40;

/// A longer line is cut: the card is a glance, the VS Code terminal has everything.
pub const MAX_LINE_CHARS: usize = 1000;

/// A chunk larger than this is interpreted only from a line start near its end; the lines
/// before are counted as hidden. Interpreting megabytes per frame would only to throw them away.
const MAX_INTERPRETED_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Color {
    #[default]
    Default,
    /// 0–255 (0–15 are the theme's).
    Indexed(u8),
    Rgb(u8, u8, u8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Style {
    fg: Color,
    bg: Color,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
    strikethrough: bool,
    inverse: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cell {
    ch: char,
    style: Style,
}

const BLANK: Cell = Cell {
    ch: ' ',
    style: Style {
        fg: Color::Default,
        bg: Color::Default,
        bold: false,
        dim: false,
        italic: false,
        underline: false,
        strikethrough: false,
        inverse: false,
    },
};

/// The interpreted tail of one command's output.
pub struct TerminalScreen {
    parser: vte::Parser,
    grid: Grid,
}

impl std::fmt::Debug for TerminalScreen {
    // The parser's state is bytes of a half-read escape sequence: nothing worth printing.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalScreen").field("grid", &self.grid).finish_non_exhaustive()
    }
}

/// The lines and the cursor; `vte` calls into it.
#[derive(Debug)]
struct Grid {
    lines: VecDeque<Vec<Cell>>,
    /// Lines dropped from the top (scrolled out of [`KEPT_LINES`], or skipped in a huge chunk).
    dropped: u64,
    row: usize,
    col: usize,
    style: Style,
}

impl Default for TerminalScreen {
    fn default() -> Self {
        Self::new()
    }
}

impl TerminalScreen {
    pub fn new() -> Self {
        TerminalScreen {
            parser: vte::Parser::new(),
            grid: Grid { lines: VecDeque::from([Vec::new()]), dropped: 0, row: 0, col: 0, style: Style::default() },
        }
    }

    /// Interprets more output.
    pub fn feed(&mut self, text: &str) {
        let bytes = text.as_bytes();
        if bytes.len() <= MAX_INTERPRETED_BYTES {
            self.parser.advance(&mut self.grid, bytes);
            return;
        }
        // Only the end is worth drawing: start at a line feed near it, with a fresh parser (an
        // escape sequence cut at the start of what is skipped must not swallow the rest) and
        // the lines skipped counted as hidden.
        let tail_from = bytes.len() - MAX_INTERPRETED_BYTES;
        let start = match bytes[tail_from..].iter().position(|&byte| byte == b'\n') {
            Some(offset) => tail_from + offset + 1,
            None => tail_from,
        };
        let skipped_lines = bytes[..start].iter().filter(|&&byte| byte == b'\n').count() as u64;
        self.parser = vte::Parser::new();
        self.grid.skip_lines(skipped_lines);
        self.parser.advance(&mut self.grid, &bytes[start..]);
    }

    /// The last [`VIEW_LINES`] lines as styled spans, and how many lines came before them. A last
    /// line that is empty (output ending with a line feed) is not shown.
    pub fn view(&self) -> (Vec<TerminalLine>, u64) {
        let mut end = self.grid.lines.len();
        if end > 1 && self.grid.lines[end - 1].is_empty() {
            end -= 1;
        }
        let start = end.saturating_sub(VIEW_LINES);
        let lines = self.grid.lines.range(start..end).map(|cells| line_view(cells)).collect();
        (lines, self.grid.dropped + start as u64)
    }

    /// The output as plain text, trailing blanks trimmed: what tests and logs compare.
    pub fn plain_text(&self) -> String {
        let (lines, _) = self.view();
        lines
            .iter()
            .map(|line| line.spans.iter().map(|span| span.text.as_str()).collect::<String>().trim_end().to_owned())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Grid {
    fn line(&mut self) -> &mut Vec<Cell> {
        &mut self.lines[self.row]
    }

    fn put(&mut self, ch: char) {
        let col = self.col;
        if col >= MAX_LINE_CHARS {
            return;
        }
        let style = self.style;
        let line = self.line();
        if line.len() < col {
            line.resize(col, BLANK);
        }
        let cell = Cell { ch, style };
        match line.get_mut(col) {
            Some(existing) => *existing = cell,
            None => line.push(cell),
        }
        self.col += 1;
    }

    fn line_feed(&mut self) {
        self.row += 1;
        if self.row == self.lines.len() {
            self.lines.push_back(Vec::new());
        }
        while self.lines.len() > KEPT_LINES {
            self.lines.pop_front();
            self.dropped += 1;
            self.row = self.row.saturating_sub(1);
        }
    }

    /// Lines of a huge chunk that were not interpreted: they count as scrolled out.
    fn skip_lines(&mut self, count: u64) {
        if count == 0 {
            return;
        }
        self.dropped += self.lines.len() as u64 - 1 + count;
        self.lines = VecDeque::from([Vec::new()]);
        self.row = 0;
        self.col = 0;
    }

    fn erase_in_line(&mut self, mode: u16) {
        let col = self.col;
        let line = self.line();
        match mode {
            0 => line.truncate(col),
            1 => {
                for cell in line.iter_mut().take(col + 1) {
                    *cell = BLANK;
                }
            }
            _ => line.clear(),
        }
    }

    fn erase_in_display(&mut self, mode: u16) {
        match mode {
            // From the cursor to the end: this line's rest and every line below.
            0 => {
                self.erase_in_line(0);
                self.lines.truncate(self.row + 1);
            }
            // Everything (`clear`): the lines kept so far count as scrolled out.
            2 | 3 => {
                self.dropped += self.lines.len() as u64;
                self.lines = VecDeque::from([Vec::new()]);
                self.row = 0;
            }
            _ => {}
        }
    }

    fn sgr(&mut self, params: &vte::Params) {
        let mut iter = params.iter();
        // `ESC [ m` is a reset.
        if params.is_empty() {
            self.style = Style::default();
            return;
        }
        while let Some(param) = iter.next() {
            let code = param.first().copied().unwrap_or(0);
            let style = &mut self.style;
            match code {
                0 => *style = Style::default(),
                1 => style.bold = true,
                2 => style.dim = true,
                3 => style.italic = true,
                4 => style.underline = true,
                7 => style.inverse = true,
                9 => style.strikethrough = true,
                21 | 22 => {
                    style.bold = false;
                    style.dim = false;
                }
                23 => style.italic = false,
                24 => style.underline = false,
                27 => style.inverse = false,
                29 => style.strikethrough = false,
                30..=37 => style.fg = Color::Indexed((code - 30) as u8),
                39 => style.fg = Color::Default,
                40..=47 => style.bg = Color::Indexed((code - 40) as u8),
                49 => style.bg = Color::Default,
                90..=97 => style.fg = Color::Indexed((code - 90 + 8) as u8),
                100..=107 => style.bg = Color::Indexed((code - 100 + 8) as u8),
                38 | 48 => {
                    // Either `38;5;n` / `38;2;r;g;b` (separate parameters) or the colon form
                    // `38:5:n` / `38:2::r:g:b` (sub-parameters of one).
                    let color = if param.len() > 1 {
                        extended_color(&param[1..])
                    } else {
                        let mode = iter.next().and_then(|next| next.first().copied());
                        match mode {
                            Some(5) => iter.next().and_then(|n| n.first().copied()).map(|n| Color::Indexed(n as u8)),
                            Some(2) => {
                                let mut channel = || iter.next().and_then(|c| c.first().copied()).unwrap_or(0) as u8;
                                Some(Color::Rgb(channel(), channel(), channel()))
                            }
                            _ => None,
                        }
                    };
                    if let Some(color) = color {
                        if code == 38 {
                            style.fg = color;
                        } else {
                            style.bg = color;
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

/// The colour of a colon-form extended colour (`5:n` or `2:[colourspace:]r:g:b`).
fn extended_color(sub: &[u16]) -> Option<Color> {
    match sub {
        [5, n, ..] => Some(Color::Indexed(*n as u8)),
        [2, r, g, b] => Some(Color::Rgb(*r as u8, *g as u8, *b as u8)),
        [2, _space, r, g, b, ..] => Some(Color::Rgb(*r as u8, *g as u8, *b as u8)),
        _ => None,
    }
}

impl vte::Perform for Grid {
    fn print(&mut self, ch: char) {
        self.put(ch);
    }

    fn execute(&mut self, byte: u8) {
        match byte {
            // Output through a PTY arrives as `\r\n`; an agent's own output (not through a PTY)
            // may have bare `\n`. Both start the next line at its first column.
            b'\n' | 0x0b | 0x0c => {
                self.line_feed();
                self.col = 0;
            }
            b'\r' => self.col = 0,
            0x08 => self.col = self.col.saturating_sub(1),
            b'\t' => {
                let next = (self.col / 8 + 1) * 8;
                while self.col < next.min(MAX_LINE_CHARS) {
                    self.put(' ');
                }
            }
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &vte::Params, intermediates: &[u8], ignore: bool, action: char) {
        if ignore || !intermediates.is_empty() {
            return;
        }
        let first = params.iter().next().and_then(|param| param.first().copied()).unwrap_or(0);
        let count = usize::from(first.max(1));
        match action {
            'm' => self.sgr(params),
            'K' => self.erase_in_line(first),
            'J' => self.erase_in_display(first),
            'C' => self.col = (self.col + count).min(MAX_LINE_CHARS),
            'D' => self.col = self.col.saturating_sub(count),
            'G' => self.col = (count - 1).min(MAX_LINE_CHARS),
            'A' => self.row = self.row.saturating_sub(count),
            'B' => self.row = (self.row + count).min(self.lines.len() - 1),
            _ => {}
        }
    }
}

fn line_view(cells: &[Cell]) -> TerminalLine {
    let mut spans: Vec<TerminalSpan> = Vec::new();
    let mut current: Option<(Style, String)> = None;
    for cell in cells {
        match &mut current {
            Some((style, text)) if *style == cell.style => text.push(cell.ch),
            _ => {
                if let Some((style, text)) = current.take() {
                    spans.push(TerminalSpan { text, style: style_view(style) });
                }
                current = Some((cell.style, cell.ch.to_string()));
            }
        }
    }
    if let Some((style, text)) = current {
        spans.push(TerminalSpan { text, style: style_view(style) });
    }
    TerminalLine { spans }
}

fn style_view(style: Style) -> TerminalStyle {
    let (mut fg, mut bg) = (color_view(style.fg), color_view(style.bg));
    if style.inverse {
        // The default colours are the theme's: inverted, they are its foreground as background
        // and its background as foreground, which the palette's white and black stand for.
        let swapped_fg = bg.take().unwrap_or(TerminalColor::Palette { index: 0 });
        let swapped_bg = fg.take().unwrap_or(TerminalColor::Palette { index: 7 });
        fg = Some(swapped_fg);
        bg = Some(swapped_bg);
    }
    TerminalStyle {
        fg,
        bg,
        bold: style.bold,
        dim: style.dim,
        italic: style.italic,
        underline: style.underline,
        strikethrough: style.strikethrough,
    }
}

fn color_view(color: Color) -> Option<TerminalColor> {
    match color {
        Color::Default => None,
        Color::Indexed(index @ 0..=15) => Some(TerminalColor::Palette { index }),
        Color::Indexed(index) => {
            let (r, g, b) = xterm_256(index);
            Some(TerminalColor::Rgb { hex: format!("#{r:02x}{g:02x}{b:02x}") })
        }
        Color::Rgb(r, g, b) => Some(TerminalColor::Rgb { hex: format!("#{r:02x}{g:02x}{b:02x}") }),
    }
}

/// The RGB value of an xterm 256-colour index from 16 up: a 6×6×6 cube, then 24 greys.
fn xterm_256(index: u8) -> (u8, u8, u8) {
    if index >= 232 {
        let level = 8 + (index - 232) * 10;
        return (level, level, level);
    }
    let cube = index - 16;
    let level = |step: u8| if step == 0 { 0 } else { 55 + step * 40 };
    (level(cube / 36), level((cube / 6) % 6), level(cube % 6))
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    /// Feeds the chunks and renders the view as text, one line per line, with each styled span
    /// as `[text|style]` so a test reads what the card would show.
    fn check(chunks: &[&str], expected: Expect) {
        let mut screen = TerminalScreen::new();
        for chunk in chunks {
            screen.feed(chunk);
        }
        let (lines, hidden) = screen.view();
        let mut out = String::new();
        if hidden > 0 {
            out.push_str(&format!("({hidden} hidden)\n"));
        }
        for line in lines {
            for span in line.spans {
                if span.style == TerminalStyle::default() {
                    out.push_str(&span.text);
                } else {
                    out.push_str(&format!("[{}|{}]", span.text, describe(&span.style)));
                }
            }
            out.push('\n');
        }
        expected.assert_eq(&out);
    }

    fn describe(style: &TerminalStyle) -> String {
        let mut parts = Vec::new();
        let color = |color: &TerminalColor| match color {
            TerminalColor::Palette { index } => format!("p{index}"),
            TerminalColor::Rgb { hex } => hex.clone(),
        };
        if let Some(fg) = &style.fg {
            parts.push(format!("fg={}", color(fg)));
        }
        if let Some(bg) = &style.bg {
            parts.push(format!("bg={}", color(bg)));
        }
        for (on, name) in [
            (style.bold, "bold"),
            (style.dim, "dim"),
            (style.italic, "italic"),
            (style.underline, "underline"),
            (style.strikethrough, "strike"),
        ] {
            if on {
                parts.push(name.to_owned());
            }
        }
        parts.join(",")
    }

    #[test]
    fn plain_lines_from_a_pty() {
        check(
            &["one\r\ntwo\r\n"],
            expect![[r#"
            one
            two
        "#]],
        );
    }

    #[test]
    fn bare_line_feeds_from_an_agent_start_lines_at_the_first_column() {
        check(
            &["a.ts\nb.ts"],
            expect![[r#"
            a.ts
            b.ts
        "#]],
        );
    }

    #[test]
    fn colours_and_attributes() {
        check(
            &[
                "\x1b[31merror\x1b[0m: \x1b[1;4mbad\x1b[22m thing\x1b[m\r\n\x1b[38;5;208morange\x1b[38;2;1;2;3m rgb \x1b[92;44mbright\x1b[0m\r\n",
            ],
            expect![[r#"
                [error|fg=p1]: [bad|bold,underline][ thing|underline]
                [orange|fg=#ff8700][ rgb |fg=#010203][bright|fg=p10,bg=p4]
            "#]],
        );
    }

    #[test]
    fn colon_form_colours() {
        check(
            &["\x1b[38:5:196mred\x1b[38:2::0:128:255m blue\x1b[0m\r\n"],
            expect![[r#"
            [red|fg=#ff0000][ blue|fg=#0080ff]
        "#]],
        );
    }

    #[test]
    fn inverse_swaps_colours() {
        check(
            &["\x1b[7m sel \x1b[27m\x1b[31;7mx\x1b[0m\r\n"],
            expect![[r#"
            [ sel |fg=p0,bg=p7][x|fg=p0,bg=p1]
        "#]],
        );
    }

    #[test]
    fn a_progress_bar_redrawn_with_carriage_returns_stays_one_line() {
        check(
            &["Downloading  10%\r", "Downloading  55%\r", "Downloading 100%\r\ndone\r\n"],
            expect![[r#"
            Downloading 100%
            done
        "#]],
        );
    }

    #[test]
    fn erase_in_line_and_shorter_redraws() {
        check(
            &["long status text\r\x1b[Kshort\r\n"],
            expect![[r#"
            short
        "#]],
        );
    }

    #[test]
    fn cursor_up_redraws_earlier_lines() {
        // What npm and docker do: draw a block, move up, draw it again.
        check(
            &["a: 1\r\nb: 1\r\n", "\x1b[2A\x1b[Ka: 2\r\n\x1b[Kb: 2\r\n"],
            expect![[r#"
            a: 2
            b: 2
        "#]],
        );
    }

    #[test]
    fn an_escape_sequence_split_between_chunks_is_understood() {
        check(
            &["\x1b[3", "2mgreen\x1b", "[0m plain\r\n"],
            expect![[r#"
            [green|fg=p2] plain
        "#]],
        );
    }

    #[test]
    fn titles_links_and_unknown_sequences_are_dropped() {
        check(
            &["\x1b]0;title\x07\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\\x1b[?25l\x1b[5;3Hok\r\n"],
            expect![[r#"
            linkok
        "#]],
        );
    }

    #[test]
    fn backspace_and_tabs() {
        check(
            &["abc\x08X\r\na\tb\r\n"],
            expect![[r#"
            abX
            a       b
        "#]],
        );
    }

    #[test]
    fn clear_screen_hides_what_came_before() {
        check(
            &["old\r\n\x1b[H\x1b[2Jnew\r\n"],
            expect![[r#"
            (2 hidden)
            new
        "#]],
        );
    }

    #[test]
    fn only_the_last_lines_are_shown_and_the_rest_is_counted() {
        let mut screen = TerminalScreen::new();
        for n in 1..=1000 {
            screen.feed(&format!("line {n}\r\n"));
        }
        let (lines, hidden) = screen.view();
        assert_eq!(lines.len(), VIEW_LINES);
        assert_eq!(hidden, 1000 - VIEW_LINES as u64);
        assert!(screen.plain_text().ends_with("line 999\nline 1000"));
    }

    #[test]
    fn a_huge_chunk_is_drawn_from_its_end_and_its_lines_counted() {
        let chunk: String = (1..=100_000).map(|n| format!("\x1b[32m{n}\x1b[0m\r\n")).collect();
        let mut screen = TerminalScreen::new();
        screen.feed(&chunk);
        let (lines, hidden) = screen.view();
        assert_eq!(hidden + lines.len() as u64, 100_000, "every line is either shown or counted");
        assert!(screen.plain_text().ends_with("99999\n100000"));
        assert_eq!(
            lines.last().map(|line| line.spans[0].style.fg.clone()),
            Some(Some(TerminalColor::Palette { index: 2 }))
        );
    }

    #[test]
    fn a_very_long_line_is_cut() {
        let mut screen = TerminalScreen::new();
        screen.feed(&"x".repeat(5000));
        assert_eq!(screen.plain_text().len(), MAX_LINE_CHARS);
    }
}
