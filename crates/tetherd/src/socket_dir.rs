//! Making the socket's path safe to listen on: a private directory, and no live listener already
//! there.
//!
//! The socket is the key to every agent tetherd runs, and the hello token is the only other
//! lock. The directory around it must therefore be ours and closed to everyone else (mode 0700),
//! so that nobody else can connect, or swap the socket for their own to collect the token.
//!
//! On Windows the socket is a named pipe (`\\.\pipe\<name>`, the host picks a random name):
//! there is no directory to close, and the pipe's own access list does it instead
//! ([`restrict_to_user`]). Named pipes get one that lets everyone read by default. The pipe is
//! also made first-instance-only (interprocess does that), so a pipe somebody else made under the
//! name first fails the listen instead of taking the host's token, and it refuses remote clients.

#[cfg(unix)]
use std::io::ErrorKind;
use std::path::Path;

use anyhow::{Context, bail};
use interprocess::local_socket::ListenerOptions;

/// Prepares `socket`'s parent directory and clears a stale socket file left by a tetherd that
/// died without cleaning up. Fails when another tetherd is listening there.
#[cfg(unix)]
pub fn prepare(socket: &Path) -> anyhow::Result<()> {
    let dir = socket
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .with_context(|| format!("the socket path {} has no parent directory", socket.display()))?;
    ensure_private_dir(dir)?;
    clear_stale_socket(socket)
}

/// Creates `dir` (mode 0700, with any missing parents) or checks that the existing one is ours
/// and private.
#[cfg(unix)]
fn ensure_private_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};

    match std::fs::symlink_metadata(dir) {
        Err(error) if error.kind() == ErrorKind::NotFound => {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .with_context(|| format!("cannot create the socket directory {}", dir.display()))?;
            // The umask may have taken bits away, never added any; set the mode exactly anyway
            // so that what is checked below is what was asked for.
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .with_context(|| format!("cannot set the mode of {}", dir.display()))?;
        }
        Err(error) => {
            return Err(error).with_context(|| format!("cannot inspect the socket directory {}", dir.display()));
        }
        Ok(_) => {}
    }
    let metadata = std::fs::symlink_metadata(dir)
        .with_context(|| format!("cannot inspect the socket directory {}", dir.display()))?;
    if metadata.file_type().is_symlink() {
        bail!(
            "the socket directory {} is a symbolic link; refusing it because whoever owns the \
             link could point it elsewhere",
            dir.display()
        );
    }
    if !metadata.is_dir() {
        bail!("the socket directory {} exists and is not a directory", dir.display());
    }
    let me = nix::unistd::geteuid().as_raw();
    if metadata.uid() != me {
        bail!(
            "the socket directory {} belongs to user {}, not to the current user {me}; refusing it",
            dir.display(),
            metadata.uid()
        );
    }
    let mode = metadata.mode() & 0o777;
    if mode & 0o077 != 0 {
        bail!(
            "the socket directory {} has mode {mode:03o}, so other users can reach the socket; \
             it must not be accessible to group or others (for example mode 700)",
            dir.display()
        );
    }
    Ok(())
}

/// Removes a socket file nobody listens on; refuses when somebody does, or when the path is not
/// a socket at all (it is not ours to delete).
#[cfg(unix)]
fn clear_stale_socket(socket: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::FileTypeExt;

    let metadata = match std::fs::symlink_metadata(socket) {
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(()),
        Err(error) => {
            return Err(error).with_context(|| format!("cannot inspect {}", socket.display()));
        }
        Ok(metadata) => metadata,
    };
    if !metadata.file_type().is_socket() {
        bail!("{} exists and is not a socket; refusing to replace it", socket.display());
    }
    match std::os::unix::net::UnixStream::connect(socket) {
        Ok(_connection) => bail!("another tetherd is listening on {}", socket.display()),
        Err(error) if error.kind() == ErrorKind::ConnectionRefused => {
            tracing::info!(socket = %socket.display(), "replacing a stale socket nobody listens on");
            std::fs::remove_file(socket).with_context(|| format!("cannot remove the stale socket {}", socket.display()))
        }
        Err(error) => Err(error)
            .with_context(|| format!("cannot tell whether another tetherd is listening on {}", socket.display())),
    }
}

/// Checks that `socket` names a named pipe on this machine, which is all Windows needs before the
/// listen (see [`restrict_to_user`] for who may connect).
#[cfg(windows)]
pub fn prepare(socket: &Path) -> anyhow::Result<()> {
    let name = socket.to_string_lossy();
    if !is_local_pipe_name(&name) {
        bail!("the socket {name} is not a named pipe of this machine: on Windows it must be \\\\.\\pipe\\<name>");
    }
    Ok(())
}

/// Whether `name` is `\\.\pipe\<something>` (either slash, any case), a named pipe on this machine.
#[cfg_attr(not(windows), allow(dead_code, reason = "Windows only; tested everywhere"))]
fn is_local_pipe_name(name: &str) -> bool {
    const PREFIX: &str = r"\\.\pipe\";
    let normalized = name.replace('/', "\\");
    normalized.len() > PREFIX.len()
        && normalized.get(..PREFIX.len()).is_some_and(|head| head.eq_ignore_ascii_case(PREFIX))
}

/// The listener's options as they must be on this platform: on Unix unchanged (the private
/// directory keeps everyone else out); on Windows with an access list that lets only the pipe's
/// owner, the user tetherd runs as, connect.
#[cfg(unix)]
pub fn restrict_to_user(options: ListenerOptions<'_>) -> anyhow::Result<ListenerOptions<'_>> {
    Ok(options)
}

/// See the Unix version. The access list is protected (`P`: nothing inherited) and has one
/// entry: full access for the owner (`OW`, the Owner Rights SID, which is whoever owns the pipe:
/// the user who made it, or the Administrators group when an elevated administrator did).
#[cfg(windows)]
pub fn restrict_to_user(options: ListenerOptions<'_>) -> anyhow::Result<ListenerOptions<'_>> {
    use interprocess::os::windows::local_socket::ListenerOptionsExt as _;
    use interprocess::os::windows::security_descriptor::SecurityDescriptor;

    let sddl = widestring::U16CString::from_str(OWNER_ONLY_SDDL).context("the access list's text has a NUL")?;
    let descriptor = SecurityDescriptor::deserialize(&sddl).context("cannot build the socket's access list")?;
    Ok(options.security_descriptor(descriptor))
}

/// The named pipe's security descriptor, in Windows' string format: a protected access list
/// granting all access to the owner and nobody else.
#[cfg(windows)]
const OWNER_ONLY_SDDL: &str = "D:P(A;;GA;;;OW)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_named_pipe_of_this_machine_is_a_windows_socket() {
        assert!(is_local_pipe_name(r"\\.\pipe\tether-me-0123456789abcdef"));
        assert!(is_local_pipe_name(r"//./PIPE/tether"));
        assert!(!is_local_pipe_name(r"\\.\pipe\"), "a pipe needs a name");
        assert!(!is_local_pipe_name(r"\\server\pipe\tether"), "another machine's pipe");
        assert!(!is_local_pipe_name(r"C:\Users\me\tetherd.sock"));
    }
}

#[cfg(all(test, unix))]
mod unix_tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_missing_directory_is_created_private() {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let socket = temp.path().join("a/b/tetherd.sock");
        prepare(&socket).expect("the directory can be created");
        let mode = std::fs::metadata(temp.path().join("a/b")).expect("it exists").permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[test]
    fn a_directory_others_can_enter_is_refused() {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let dir = temp.path().join("open");
        std::fs::create_dir(&dir).expect("create");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let error = prepare(&dir.join("tetherd.sock")).expect_err("0755 must be refused");
        assert!(error.to_string().contains("has mode 755"), "{error}");
    }

    #[test]
    fn a_regular_file_at_the_socket_path_is_left_alone() {
        let temp = tempfile::tempdir().expect("a temporary directory");
        let dir = temp.path().join("run");
        std::fs::create_dir(&dir).expect("create");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        let socket = dir.join("tetherd.sock");
        std::fs::write(&socket, "precious").expect("write");
        let error = prepare(&socket).expect_err("a regular file is not a stale socket");
        assert!(error.to_string().contains("is not a socket"), "{error}");
        assert_eq!(std::fs::read_to_string(&socket).expect("still there"), "precious");
    }
}
