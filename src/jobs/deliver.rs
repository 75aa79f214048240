//! Delivery into mail stores (`label --copy-to/--move-to DEST` when DEST is a Maildir or an
//! mbox store), done the way mail delivery agents do it, so that a mail program reading the
//! store at the same time never sees half a message and a failure never loses one:
//!
//! * **Maildir** (Bernstein's maildir(5), <https://cr.yp.to/proto/maildir.html>): a message is
//!   written to `tmp/` under a unique name (`TIME.MUSECPPIDQCOUNT.HOST`), synced, and linked
//!   into `new/` (a link, not a rename, so an existing name is never replaced), then the
//!   directory is synced. A message moved out of another Maildir keeps its name, its `cur/` or
//!   `new/` and its `:2,FLAGS` (read, replied, flagged stay so), as mail programs move them.
//!   Folders are Maildir++ dot folders (`.Work.Projects` for `Work/Projects`, names in IMAP's
//!   modified UTF-7 as Dovecot and Courier write them, with a `maildirfolder` file) or, in a
//!   store kept one directory per folder, `Work/Projects/`; each is created with `cur/ new/
//!   tmp/` when it is missing.
//! * **mbox** (one file per label, Thunderbird's `Parent.sbd/Child` for `Parent/Child`): the
//!   message is appended under both locks mail programs take, a `MAILBOX.lock` file created
//!   exclusively (procmail, mutt, mailx) and `flock` on the file (Thunderbird, Dovecot), with
//!   mboxrd quoting (a body line matching `>*From ` gets one more `>`, which the reader in
//!   [`crate::text::mailbox::mbox`] takes off again) and a blank line after it. The append is
//!   synced; on any error the file is cut back to its previous length, so a reader never finds
//!   half a message. A lock held by another program is waited for up to a timeout, then the
//!   message is refused with an error naming the mailbox ([`DeliveryError::Locked`]), and stays
//!   where it was.
//!
//! `flock` is the standard library's `File::try_lock` (flock(2) on Linux and the BSDs), which
//! [`crate::integrations::lock`] already uses: fs4 or rustix would add nothing.
//!
//! A move removes its source only after the message is safely in the store. Messages of an mbox
//! can be copied but not moved: taking one out of its mbox means rewriting that file under the
//! mail programs' feet, which cwtext does not do (see [`crate::jobs::label`]).

use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::{DeliveryError, Error, Result};
use crate::jobs::route::{route_bytes, route_file, RouteMode};
use crate::text::mailbox::{self, maildir, mbox, Layout};
use crate::text::source::{MboxSpan, Source};

/// How a destination store is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DestLayout {
    /// `DEST/<label>/<file>`: a copy of each file (the layout of a training corpus).
    Files,
    /// A Maildir store: Maildir++ dot folders, or one directory per folder.
    Maildir,
    /// One mbox file per label.
    Mbox,
}

impl std::fmt::Display for DestLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DestLayout::Files => "files",
            DestLayout::Maildir => "maildir",
            DestLayout::Mbox => "mbox",
        })
    }
}

/// The two ways a Maildir store keeps its folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MaildirKind {
    /// Maildir++: `.Parent.Child`, the root being the inbox.
    PlusPlus,
    /// One directory per folder (Dovecot `LAYOUT=fs`, mbsync): `Parent/Child/`.
    Directories,
}

/// How long `label` waits for another program's lock on an mbox by default.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// A message read for delivery: its bytes (an mbox message's quoting undone) and, for a message
/// of an mbox, its `From ` separator line without the line end.
#[derive(Debug, Clone)]
pub struct Message {
    pub bytes: Vec<u8>,
    pub separator: Option<Vec<u8>>,
}

/// Most bytes a message read for delivery may have (the reader's `max + 1` must not overflow).
const MAX_MESSAGE: usize = usize::MAX / 4;

impl Message {
    /// Reads the message at `source`. `from_mbox_store` says that a whole file is an mbox file
    /// of one message (its separator line is taken off and its quoting undone, as for the
    /// messages of a longer mbox).
    pub fn read(source: &Source, from_mbox_store: bool) -> Result<Message> {
        if let Some(span) = source.mbox_span() {
            let bytes = source.read_bytes(MAX_MESSAGE)?;
            let mut separator = vec![0; (span.start - span.offset) as usize];
            let mut file = File::open(source.path()).map_err(|e| Error::io(source.name(), e))?;
            file.seek(SeekFrom::Start(span.offset))
                .and_then(|_| file.read_exact(&mut separator))
                .map_err(|e| Error::io(source.name(), e))?;
            return Ok(Message {
                bytes,
                separator: Some(trim_line_end(&separator).to_vec()),
            });
        }
        let bytes = source.read_bytes(MAX_MESSAGE)?;
        if from_mbox_store && mbox::bytes_look_like_mbox(&bytes) {
            let scan = mbox::scan_bytes(&bytes, source.path())?;
            if let Some(span) = scan.spans.first() {
                let separator = trim_line_end(&bytes[..span.start as usize]).to_vec();
                let body = mbox::unquote(&bytes[span.start as usize..span.end as usize]);
                return Ok(Message {
                    bytes: body.into_owned(),
                    separator: Some(separator),
                });
            }
        }
        Ok(Message {
            bytes,
            separator: None,
        })
    }
}

fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// A destination being delivered into: the store at `root` and how it is written.
#[derive(Debug)]
pub struct Destination {
    root: PathBuf,
    layout: DestLayout,
    maildir: MaildirKind,
    lock_timeout: Duration,
    /// Unique names already in each Maildir folder (its `cur/` and `new/`), listed once, so a
    /// moved message never takes a name that is there with other flags.
    names: HashMap<PathBuf, HashSet<String>>,
    /// Mailboxes whose lock was not got in time: later messages for them fail at once instead
    /// of waiting again.
    locked: HashMap<PathBuf, DeliveryError>,
}

impl Destination {
    /// The destination at `root`: an existing Maildir or mbox store is written as it is (and
    /// `asked`, when given, must agree); otherwise `asked`, by default [`DestLayout::Files`]. A
    /// new Maildir store is a Maildir++ root (with its own `cur/ new/ tmp/`, the inbox), made
    /// here.
    pub fn open(root: &Path, asked: Option<DestLayout>, lock_timeout: Duration) -> Result<Self> {
        let (dest, found) = Self::inspect(root, asked)?;
        if dest.layout != DestLayout::Files
            && found.is_none()
            && std::fs::read_dir(root).is_ok_and(|mut d| {
                d.any(|e| e.is_ok_and(|e| !e.file_name().to_string_lossy().starts_with('.')))
            })
        {
            // A folder of plain files would end up half corpus, half store.
            return Err(Error::InvalidSetting(format!(
                "{}: neither empty nor a mail store (it holds files or folders that are not Maildir or mbox folders): refusing to make a {} store in it",
                root.display(),
                dest.layout
            )));
        }
        match (dest.layout, dest.maildir) {
            // The root of a Maildir++ store is the inbox: a Maildir itself.
            (DestLayout::Maildir, MaildirKind::PlusPlus) => make_maildir(root)?,
            // Label folders are made as files arrive (none when nothing is routed).
            (DestLayout::Files, _) => {}
            _ => std::fs::create_dir_all(root).map_err(|e| Error::io(root, e))?,
        }
        Ok(Destination {
            lock_timeout,
            ..dest
        })
    }

    /// The store at `root` as [`Destination::open`] would write it, without making anything;
    /// also the layout found there (`None`: no store yet).
    pub fn inspect(root: &Path, asked: Option<DestLayout>) -> Result<(Self, Option<DestLayout>)> {
        let found = if root.exists() {
            if root.is_file() {
                return Err(Error::InvalidSetting(format!(
                    "{}: the destination is a file; give a directory (a mail store or a folder for one)",
                    root.display()
                )));
            }
            match mailbox::detect(root) {
                Layout::Maildir => Some(DestLayout::Maildir),
                Layout::Mbox => Some(DestLayout::Mbox),
                Layout::Mh => {
                    return Err(Error::InvalidSetting(format!(
                        "{}: an MH store; delivery into MH folders is not written (give another destination, or --dest-layout files for a folder per label)",
                        root.display()
                    )))
                }
                Layout::Files | Layout::Rows | Layout::Lines => None,
            }
        } else {
            None
        };
        let layout = match (found, asked) {
            (Some(f), Some(a)) if f != a => {
                return Err(Error::InvalidSetting(format!(
                    "{}: an existing {f} store, but --dest-layout {a} was asked; leave --dest-layout out to deliver into it as it is",
                    root.display()
                )))
            }
            (Some(f), _) => f,
            (None, a) => a.unwrap_or(DestLayout::Files),
        };
        let maildir = if layout == DestLayout::Maildir
            && found.is_some()
            && !maildir::is_maildir(root)
            && !has_dot_folder(root)
        {
            MaildirKind::Directories
        } else {
            MaildirKind::PlusPlus
        };
        let dest = Destination {
            root: root.to_path_buf(),
            layout,
            maildir,
            lock_timeout: LOCK_TIMEOUT,
            names: HashMap::new(),
            locked: HashMap::new(),
        };
        Ok((dest, found))
    }

    pub fn layout(&self) -> DestLayout {
        self.layout
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether delivering `source` needs its bytes (rather than a rename or a file copy).
    pub fn needs_bytes(&self, source: &Source) -> bool {
        match self.layout {
            DestLayout::Files => !source.is_whole_file(),
            DestLayout::Maildir => !is_maildir_message(source),
            DestLayout::Mbox => true,
        }
    }

    /// Where `folder` (a label, `Parent/Child`, or the unsure folder) is in this store: a
    /// Maildir folder, an mbox file, or the files layout's directory.
    pub fn folder_path(&self, folder: &str) -> std::result::Result<PathBuf, DeliveryError> {
        let parts: Vec<&str> = folder.split('/').collect();
        for part in &parts {
            let why = if part.is_empty() {
                Some("an empty level")
            } else if *part == "." || *part == ".." {
                Some("a level `.` or `..`")
            } else if part.contains('\0') || part.contains('\\') && cfg!(windows) {
                Some("a character a file name cannot hold")
            } else if part.starts_with('.') && self.layout != DestLayout::Files {
                Some("a level starting with `.`, which mail stores hide")
            } else {
                None
            };
            if let Some(why) = why {
                return Err(DeliveryError::BadFolder {
                    label: folder.to_string(),
                    why: why.to_string(),
                });
            }
        }
        Ok(match (self.layout, self.maildir) {
            (DestLayout::Files, _) => self.root.join(folder),
            (DestLayout::Maildir, MaildirKind::PlusPlus) => {
                let encoded: Vec<String> = parts.iter().map(|p| encode_modified_utf7(p)).collect();
                self.root.join(format!(".{}", encoded.join(".")))
            }
            (DestLayout::Maildir, MaildirKind::Directories) => {
                parts.iter().fold(self.root.clone(), |p, part| {
                    p.join(encode_modified_utf7(part))
                })
            }
            (DestLayout::Mbox, _) => {
                let (last, parents) = parts.split_last().expect("split gives one part at least");
                let mut path = self.root.clone();
                for p in parents {
                    path.push(format!("{p}.sbd"));
                }
                path.join(last)
            }
        })
    }

    /// Delivers `source` into `folder`, copying or moving it; `message` is its bytes when
    /// [`Destination::needs_bytes`] says so. Returns where the message now is. A move removes
    /// the source only once the message is safely in the store; on any error the source is as
    /// it was.
    pub fn deliver(
        &mut self,
        source: &Source,
        message: Option<&Message>,
        folder: &str,
        mode: RouteMode,
    ) -> Result<Source> {
        let failed = |mailbox: &Path, kind| Error::Delivery {
            mailbox: mailbox.to_path_buf(),
            message: source.name(),
            kind,
        };
        let place = self
            .folder_path(folder)
            .map_err(|kind| failed(&self.root, kind))?;
        let needed = || {
            message.ok_or_else(|| {
                failed(
                    &place,
                    DeliveryError::Write("the message was not read".into()),
                )
            })
        };
        match self.layout {
            DestLayout::Files => {
                if source.is_whole_file() {
                    return route_file(source.path(), &place, mode).map(Source::file);
                }
                let name = format!(
                    "{}-{}.eml",
                    source
                        .path()
                        .file_name()
                        .unwrap_or_default()
                        .to_string_lossy(),
                    source.mbox_span().map_or(0, |s| s.offset)
                );
                route_bytes(&needed()?.bytes, &place, &name).map(Source::file)
            }
            DestLayout::Maildir => {
                self.ensure_folder(&place)?;
                let to = if is_maildir_message(source) && mode == RouteMode::Move {
                    self.move_maildir_message(source, &place)?
                } else {
                    let bytes = match message {
                        Some(m) => std::borrow::Cow::Borrowed(&m.bytes),
                        None => std::borrow::Cow::Owned(source.read_bytes(MAX_MESSAGE)?),
                    };
                    let to = self.write_new(&bytes, &place, source)?;
                    if mode == RouteMode::Move {
                        remove_source(source)?;
                    }
                    to
                };
                Ok(Source::maildir_message(to))
            }
            DestLayout::Mbox => {
                if let Some(kind) = self.locked.get(&place) {
                    return Err(failed(&place, kind.clone()));
                }
                let result = append_mbox(&place, needed()?, self.lock_timeout);
                let span = match result {
                    Ok(span) => span,
                    Err(kind) => {
                        if matches!(kind, DeliveryError::Locked { .. }) {
                            self.locked.insert(place.clone(), kind.clone());
                        }
                        return Err(failed(&place, kind));
                    }
                };
                if mode == RouteMode::Move {
                    remove_source(source)?;
                }
                Ok(Source::mbox_message(place, span))
            }
        }
    }

    /// Creates the Maildir folder `dir` when missing (with `maildirfolder` in a Maildir++
    /// sub-folder) and lists the unique names already in it.
    fn ensure_folder(&mut self, dir: &Path) -> Result<()> {
        if self.names.contains_key(dir) {
            return Ok(());
        }
        make_maildir(dir)?;
        if self.maildir == MaildirKind::PlusPlus && dir != self.root {
            let marker = dir.join("maildirfolder");
            if !marker.exists() {
                File::create(&marker).map_err(|e| Error::io(&marker, e))?;
            }
        }
        let (files, _) = maildir::messages(dir);
        let names = files
            .iter()
            .filter_map(|f| f.file_name())
            .map(|n| maildir::unique_name(&n.to_string_lossy()).to_string())
            .collect();
        self.names.insert(dir.to_path_buf(), names);
        Ok(())
    }

    /// Takes a unique name in `dir` that nothing in it has.
    fn claim(&mut self, dir: &Path, name: &str) -> bool {
        self.names
            .entry(dir.to_path_buf())
            .or_default()
            .insert(name.to_string())
    }

    /// Writes `bytes` into `dir`'s `tmp/`, syncs it and links it into `new/`.
    fn write_new(&mut self, bytes: &[u8], dir: &Path, source: &Source) -> Result<PathBuf> {
        let failed = |kind| Error::Delivery {
            mailbox: dir.to_path_buf(),
            message: source.name(),
            kind,
        };
        let write = |e: std::io::Error| failed(DeliveryError::Write(e.to_string()));
        loop {
            let name = unique_name();
            if !self.claim(dir, &name) {
                continue;
            }
            let tmp = dir.join("tmp").join(&name);
            let target = dir.join("new").join(&name);
            let mut file = match OpenOptions::new().write(true).create_new(true).open(&tmp) {
                Ok(f) => f,
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(write(e)),
            };
            if let Err(e) = file.write_all(bytes).and_then(|_| file.sync_all()) {
                drop(file);
                let _ = std::fs::remove_file(&tmp);
                return Err(write(e));
            }
            drop(file);
            let linked = link_no_replace(&tmp, &target);
            let _ = std::fs::remove_file(&tmp);
            match linked {
                Ok(()) => {
                    sync_dir(&dir.join("new"));
                    return Ok(target);
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(write(e)),
            }
        }
    }

    /// Moves a Maildir message into the folder `dir`, keeping its `cur/` or `new/` and its
    /// flags; its unique name too, unless the folder has it already.
    fn move_maildir_message(&mut self, source: &Source, dir: &Path) -> Result<PathBuf> {
        let path = source.path();
        let sub = path
            .parent()
            .and_then(Path::file_name)
            .map_or("new".into(), |s| s.to_string_lossy().into_owned());
        let folder = path.parent().and_then(Path::parent);
        if folder.is_some_and(|f| same_dir(f, dir)) {
            return Ok(path.to_path_buf()); // already in its folder
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let unique = maildir::unique_name(&name).to_string();
        let flags = name[unique.len()..].to_string();
        let failed = |e: std::io::Error| Error::Delivery {
            mailbox: dir.to_path_buf(),
            message: source.name(),
            kind: DeliveryError::Write(e.to_string()),
        };
        let mut candidate = unique.clone();
        loop {
            if self.claim(dir, &candidate) {
                let target = dir.join(&sub).join(format!("{candidate}{flags}"));
                match link_no_replace(path, &target) {
                    Ok(()) => {
                        sync_dir(&dir.join(&sub));
                        remove_source(source)?;
                        return Ok(target);
                    }
                    Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
                    Err(_) => {
                        // Another file system (or no hard links): through tmp/, keeping the
                        // sub-folder and the flags.
                        let bytes = source.read_bytes(MAX_MESSAGE)?;
                        let new = self.write_new(&bytes, dir, source)?;
                        let target = dir.join(&sub).join(format!(
                            "{}{flags}",
                            new.file_name().unwrap_or_default().to_string_lossy()
                        ));
                        if new != target {
                            std::fs::rename(&new, &target).map_err(failed)?;
                            sync_dir(&dir.join(&sub));
                        }
                        remove_source(source)?;
                        return Ok(target);
                    }
                }
            }
            candidate = unique_name();
        }
    }
}

fn is_maildir_message(source: &Source) -> bool {
    source.is_whole_file()
        && source
            .path()
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|s| s == "cur" || s == "new")
        && source
            .path()
            .parent()
            .and_then(Path::parent)
            .is_some_and(maildir::is_maildir)
}

fn has_dot_folder(root: &Path) -> bool {
    std::fs::read_dir(root).is_ok_and(|d| {
        d.flatten().any(|e| {
            e.file_name().to_string_lossy().starts_with('.') && maildir::is_maildir(&e.path())
        })
    })
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// Creates `dir` with `cur/ new/ tmp/`.
fn make_maildir(dir: &Path) -> Result<()> {
    for sub in maildir::SUBFOLDERS {
        let d = dir.join(sub);
        std::fs::create_dir_all(&d).map_err(|e| Error::io(&d, e))?;
    }
    Ok(())
}

/// Removes a moved message's source, after it was delivered.
fn remove_source(source: &Source) -> Result<()> {
    std::fs::remove_file(source.path()).map_err(|e| Error::io(source.name(), e))
}

/// `from` linked as `to`, which must not exist (unlike rename, which would replace it).
fn link_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::hard_link(from, to)
}

/// Syncs a directory, so that a link or a new file in it survives a crash. Best effort: not
/// every file system can open a directory.
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Deliveries made by this process, for unique names (maildir(5)'s `Q`).
static DELIVERIES: AtomicU64 = AtomicU64::new(0);

/// A new Maildir unique name: `SECONDS.MMICROSECONDSPPIDQCOUNT.HOST` (maildir(5)), the host with
/// `/` and `:` written as `\057` and `\072` as the spec asks.
pub fn unique_name() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let count = DELIVERIES.fetch_add(1, Ordering::Relaxed);
    format!(
        "{}.M{}P{}Q{count}.{}",
        now.as_secs(),
        now.subsec_micros(),
        std::process::id(),
        host_name()
    )
}

fn host_name() -> String {
    static HOST: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .or_else(|_| std::fs::read_to_string("/etc/hostname"))
            .ok()
            .or_else(|| std::env::var("HOSTNAME").ok())
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "localhost".to_string());
        name.replace('/', "\\057").replace(':', "\\072")
    })
    .clone()
}

/// A folder name in IMAP's modified UTF-7 (RFC 3501 §5.1.3), as Dovecot and Courier name
/// Maildir folders: printable ASCII as it is (`&` as `&-`), other characters as `&`, base64 of
/// their UTF-16 with `,` for `/`, `-`. The inverse of [`maildir::folder_name`].
pub fn encode_modified_utf7(name: &str) -> String {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+,";
    let mut out = String::new();
    let mut pending: Vec<u16> = Vec::new();
    let flush = |pending: &mut Vec<u16>, out: &mut String| {
        if pending.is_empty() {
            return;
        }
        out.push('&');
        let bytes: Vec<u8> = pending.iter().flat_map(|u| u.to_be_bytes()).collect();
        for chunk in bytes.chunks(3) {
            let b = [
                chunk[0],
                *chunk.get(1).unwrap_or(&0),
                *chunk.get(2).unwrap_or(&0),
            ];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            let chars = [18, 12, 6, 0].map(|s| B64[((n >> s) & 63) as usize] as char);
            out.extend(&chars[..chunk.len() + 1]);
        }
        out.push('-');
        pending.clear();
    };
    for c in name.chars() {
        if (' '..='~').contains(&c) {
            flush(&mut pending, &mut out);
            if c == '&' {
                out.push_str("&-");
            } else {
                out.push(c);
            }
        } else {
            let mut units = [0u16; 2];
            pending.extend_from_slice(c.encode_utf16(&mut units));
        }
    }
    flush(&mut pending, &mut out);
    out
}

/// An mbox locked for appending: the `MAILBOX.lock` file created exclusively, and `flock` on
/// the mailbox itself. Both are released when dropped (the lock file removed).
struct MboxLock {
    file: File,
    dot: PathBuf,
}

impl Drop for MboxLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
        let _ = std::fs::remove_file(&self.dot);
    }
}

/// How often a held lock is tried again.
const LOCK_POLL: Duration = Duration::from_millis(50);

fn lock_mbox(path: &Path, timeout: Duration) -> std::result::Result<MboxLock, DeliveryError> {
    let start = Instant::now();
    let dot = crate::integrations::lock::sidecar(path, ".lock");
    let io = |e: std::io::Error| DeliveryError::Write(e.to_string());
    let locked = |how: String| DeliveryError::Locked {
        how,
        seconds: timeout.as_secs_f64(),
    };
    loop {
        match OpenOptions::new().write(true).create_new(true).open(&dot) {
            Ok(mut f) => {
                // Who holds it, for people (as liblockfile writes it).
                let _ = writeln!(f, "{}", std::process::id());
                break;
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                if start.elapsed() >= timeout {
                    return Err(locked(format!(
                        "{} exists; remove it if no program is writing the mailbox",
                        dot.display()
                    )));
                }
                std::thread::sleep(LOCK_POLL);
            }
            Err(e) => return Err(io(e)),
        }
    }
    let remove_dot = |e| {
        let _ = std::fs::remove_file(&dot);
        e
    };
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| remove_dot(io(e)))?;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(MboxLock { file, dot }),
            Err(std::fs::TryLockError::WouldBlock) => {
                if start.elapsed() >= timeout {
                    return Err(remove_dot(locked("flock on the mailbox".into())));
                }
                std::thread::sleep(LOCK_POLL);
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(remove_dot(io(e))),
        }
    }
}

/// The mboxrd quoting of a message: one more `>` on every line matching `>*From `.
pub fn quote(message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(message.len() + 64);
    for line in message.split_inclusive(|&b| b == b'\n') {
        let rest = &line[line.iter().take_while(|&&b| b == b'>').count()..];
        if rest.starts_with(b"From ") {
            out.push(b'>');
        }
        out.extend_from_slice(line);
    }
    out
}

/// The `From ` separator line for a message that did not come with one: its return address
/// (or `MAILER-DAEMON`) and its `Date:` in asctime form, UTC (the epoch without one), so the
/// same message always gets the same line.
pub fn separator_for(message: &[u8]) -> Vec<u8> {
    let parsed = mail_parser::MessageParser::default().parse_headers(message);
    let sender = parsed
        .as_ref()
        .and_then(|m| m.return_address())
        .map(|a| a.trim().trim_matches(['<', '>']).to_string())
        .filter(|a| !a.is_empty() && !a.contains(char::is_whitespace))
        .unwrap_or_else(|| "MAILER-DAEMON".to_string());
    // Years 1000–9999 only: the reader needs a four-digit year.
    let seconds = parsed
        .as_ref()
        .and_then(|m| m.date())
        .map(|d| d.to_timestamp())
        .filter(|t| (-30_610_224_000..=253_402_300_799).contains(t))
        .unwrap_or(0);
    let d = mail_parser::DateTime::from_timestamp(seconds);
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "From {sender} {} {} {:>2} {:02}:{:02}:{:02} {}",
        DAYS[usize::from(d.day_of_week() % 7)],
        MONTHS[usize::from(d.month.clamp(1, 12) - 1)],
        d.day,
        d.hour,
        d.minute,
        d.second,
        d.year
    )
    .into_bytes()
}

/// Appends `message` to the mbox at `path` under its locks; returns where it now is.
fn append_mbox(
    path: &Path,
    message: &Message,
    timeout: Duration,
) -> std::result::Result<MboxSpan, DeliveryError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| DeliveryError::Write(e.to_string()))?;
    }
    let mut lock = lock_mbox(path, timeout)?;
    append_locked(&mut lock.file, message, |file, bytes| file.write_all(bytes))
}

/// The append itself, on a locked file: the bytes after the file's end are written through
/// `write` (a test makes it fail half-way), synced, and cut off again on any error.
fn append_locked(
    file: &mut File,
    message: &Message,
    write: impl FnOnce(&mut File, &[u8]) -> std::io::Result<()>,
) -> std::result::Result<MboxSpan, DeliveryError> {
    let io = |e: std::io::Error| DeliveryError::Write(e.to_string());
    let len = file.seek(SeekFrom::End(0)).map_err(io)?;
    let mut tail = [0u8; 4];
    let have = len.min(4) as usize;
    if have > 0 {
        file.seek(SeekFrom::Start(len - have as u64)).map_err(io)?;
        file.read_exact(&mut tail[..have]).map_err(io)?;
    }
    let tail = &tail[..have];
    let (mut separator, mut body) = match &message.separator {
        Some(s) => (s.clone(), message.bytes.as_slice()),
        None => {
            // A mail file that starts with its own separator line (as many saved mails do).
            let first = message
                .bytes
                .split(|&b| b == b'\n')
                .next()
                .unwrap_or_default();
            if mbox::is_separator(trim_line_end(first)) {
                let rest = &message.bytes[(first.len() + 1).min(message.bytes.len())..];
                (trim_line_end(first).to_vec(), rest)
            } else {
                (separator_for(&message.bytes), message.bytes.as_slice())
            }
        }
    };
    // The message's own line end, for the lines added around it.
    let crlf = body
        .split(|&b| b == b'\n')
        .next()
        .is_some_and(|l| l.ends_with(b"\r"))
        && body.contains(&b'\n');
    let eol: &[u8] = if crlf { b"\r\n" } else { b"\n" };
    let mut out = Vec::with_capacity(body.len() + 128);
    if len > 0 && !(tail.ends_with(b"\n\n") || tail.ends_with(b"\r\n\r\n")) {
        // A blank line must come before every separator.
        if !tail.ends_with(b"\n") {
            out.extend_from_slice(eol);
        }
        out.extend_from_slice(eol);
    }
    let offset = len + out.len() as u64;
    separator.extend_from_slice(eol);
    out.extend_from_slice(&separator);
    let start = len + out.len() as u64;
    if body.is_empty() {
        body = eol;
    }
    out.extend_from_slice(&quote(body));
    if !out.ends_with(b"\n") {
        out.extend_from_slice(eol);
    }
    let end = len + out.len() as u64;
    out.extend_from_slice(eol);
    let written = file
        .seek(SeekFrom::Start(len))
        .and_then(|_| write(file, &out))
        .and_then(|_| file.sync_data());
    if let Err(e) = written {
        let restored = file.set_len(len).and_then(|_| file.sync_data());
        return Err(DeliveryError::Write(match restored {
            Ok(()) => {
                format!("{e}; the mailbox was cut back to its {len} bytes before the message")
            }
            Err(r) => format!("{e}; cutting the mailbox back to its {len} bytes failed too: {r}"),
        }));
    }
    Ok(MboxSpan { offset, start, end })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modified_utf7_round_trips_through_the_reader() {
        for name in [
            "Entwürfe",
            "日本語",
            "Tom & Jerry",
            "Spam",
            "a/b",
            "Ünïcödé x ✓",
        ] {
            let encoded = encode_modified_utf7(name);
            assert!(
                encoded.bytes().all(|b| (b' '..=b'~').contains(&b)),
                "{encoded}"
            );
            assert_eq!(maildir::folder_name(&encoded), name, "{encoded}");
        }
        assert_eq!(encode_modified_utf7("Entwürfe"), "Entw&APw-rfe");
        assert_eq!(encode_modified_utf7("日本語"), "&ZeVnLIqe-");
    }

    #[test]
    fn quoting_is_mboxrd_and_the_reader_undoes_it() {
        let body = b"Subject: x\n\nFrom here\n>From there\n>>From afar\nFromage\n";
        let quoted = quote(body);
        assert_eq!(
            quoted,
            b"Subject: x\n\n>From here\n>>From there\n>>>From afar\nFromage\n"
        );
        assert_eq!(mbox::unquote(&quoted).as_ref(), body);
    }

    #[test]
    fn separators_are_made_from_the_message_and_read_as_separators() {
        let line = separator_for(
            b"Return-Path: <a@example.com>\nDate: Tue, 1 Oct 2002 10:00:00 +0100\nSubject: x\n\nx\n",
        );
        assert_eq!(line, b"From a@example.com Tue Oct  1 09:00:00 2002");
        assert!(mbox::is_separator(&line));
        let none = separator_for(b"Subject: no date\n\nx\n");
        assert_eq!(none, b"From MAILER-DAEMON Thu Jan  1 00:00:00 1970");
        assert!(mbox::is_separator(&none));
    }

    fn message(text: &[u8]) -> Message {
        Message {
            bytes: text.to_vec(),
            separator: None,
        }
    }

    #[test]
    fn appends_read_back_through_the_mbox_reader() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("Spam");
        let a = b"Subject: a\n\nFrom the top\nno newline at the end";
        let b = b"Subject: b\r\n\r\n>From quoted\r\n";
        let s1 = append_mbox(&path, &message(a), LOCK_TIMEOUT).unwrap();
        let s2 = append_mbox(&path, &message(b), LOCK_TIMEOUT).unwrap();
        assert!(
            !dir.path().join("Spam.lock").exists(),
            "the dot-lock is removed"
        );
        let scan = mbox::scan_file(&path).unwrap();
        assert_eq!(scan.spans, [s1, s2], "{:?}", scan.warnings);
        assert!(scan.warnings.is_empty(), "{:?}", scan.warnings);
        let read = |s| Source::mbox_message(&path, s).read_bytes(1 << 20).unwrap();
        assert_eq!(read(s1), [&a[..], b"\n"].concat(), "a line end is added");
        assert_eq!(read(s2), b, "CRLF kept, quoting undone");
    }

    /// Crash safety: a write that fails half-way leaves the mbox as it was.
    #[test]
    fn a_failed_append_is_cut_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("Work");
        append_mbox(&path, &message(b"Subject: one\n\none\n"), LOCK_TIMEOUT).unwrap();
        let before = std::fs::read(&path).unwrap();
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let err = append_locked(&mut file, &message(b"Subject: two\n\ntwo\n"), |f, bytes| {
            f.write_all(&bytes[..bytes.len() / 2])?;
            Err(std::io::Error::other("disk full"))
        })
        .unwrap_err();
        assert!(
            err.to_string().contains("disk full") && err.to_string().contains("cut back"),
            "{err}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn a_held_lock_times_out_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("Spam");
        std::fs::write(dir.path().join("Spam.lock"), "").unwrap();
        let err = append_mbox(
            &path,
            &message(b"Subject: x\n\nx\n"),
            Duration::from_millis(120),
        )
        .unwrap_err();
        assert!(matches!(err, DeliveryError::Locked { .. }), "{err}");
        assert!(err.to_string().contains("Spam.lock exists"), "{err}");
        assert!(
            dir.path().join("Spam.lock").exists(),
            "another program's lock is left alone"
        );
        std::fs::remove_file(dir.path().join("Spam.lock")).unwrap();
        // flock held by another open file (as another process would).
        std::fs::write(&path, "").unwrap();
        let holder = File::open(&path).unwrap();
        holder.lock().unwrap();
        let err = append_mbox(
            &path,
            &message(b"Subject: x\n\nx\n"),
            Duration::from_millis(120),
        )
        .unwrap_err();
        assert!(err.to_string().contains("flock"), "{err}");
        assert!(
            !dir.path().join("Spam.lock").exists(),
            "our dot-lock is removed"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"");
    }

    #[test]
    fn maildir_names_are_unique_and_folders_are_made() {
        let names: HashSet<String> = (0..1000).map(|_| unique_name()).collect();
        assert_eq!(names.len(), 1000);
        assert!(names.iter().all(|n| !n.contains('/') && !n.contains(':')));
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("Maildir");
        let mut dest = Destination::open(&root, Some(DestLayout::Maildir), LOCK_TIMEOUT).unwrap();
        assert!(maildir::is_maildir(&root));
        assert_eq!(
            dest.folder_path("Work/Projects").unwrap(),
            root.join(".Work.Projects")
        );
        assert_eq!(
            dest.folder_path("Entwürfe").unwrap(),
            root.join(".Entw&APw-rfe")
        );
        assert!(dest.folder_path("a/../b").is_err());
        assert!(dest.folder_path(".hidden").is_err());
        let src = dir.path().join("mail.eml");
        std::fs::write(&src, "Subject: x\n\nx\n").unwrap();
        let source = Source::file(&src);
        let m = Message::read(&source, false).unwrap();
        let a = dest
            .deliver(&source, Some(&m), "Work/Projects", RouteMode::Copy)
            .unwrap();
        let b = dest
            .deliver(&source, Some(&m), "Work/Projects", RouteMode::Copy)
            .unwrap();
        assert_ne!(a, b);
        assert!(a.path().starts_with(root.join(".Work.Projects/new")));
        assert!(root.join(".Work.Projects/maildirfolder").exists());
        assert_eq!(std::fs::read(a.path()).unwrap(), b"Subject: x\n\nx\n");
        assert_eq!(
            std::fs::read_dir(root.join(".Work.Projects/tmp"))
                .unwrap()
                .count(),
            0
        );
        // Reopened, it is found as it is; another layout is refused.
        assert!(Destination::open(&root, Some(DestLayout::Mbox), LOCK_TIMEOUT).is_err());
        let again = Destination::open(&root, None, LOCK_TIMEOUT).unwrap();
        assert_eq!(again.layout(), DestLayout::Maildir);
    }
}
