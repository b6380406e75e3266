//! Audit records and an append-only JSONL audit log.
//!
//! An [`AuditRecord`] describes one finished tool execution; [`AuditLog`]
//! appends records to a file, one compact JSON object per line.
//! [`iso8601_millis`] (re-exported from [`crate::timestamp`]) formats the
//! timestamps.

use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use crate::clock::Instant;

pub use crate::timestamp::iso8601_millis;

/// One line of the audit log. Serialises with camelCase keys; `errorCode`
/// is omitted when `None` (other `None`s serialise as `null`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    pub execution_id: String,
    pub tool_call_id: Option<String>,
    pub session_id: Option<String>,
    pub tool_name: String,
    /// See [`crate::canonical::input_hash`].
    pub input_hash: String,
    /// ISO 8601 UTC with millis, see [`iso8601_millis`].
    pub started_at: String,
    pub finished_at: String,
    pub duration_ms: f64,
    pub status: String,
    pub attempts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// Who approved or denied the call, when, and whether the arguments were edited;
    /// absent for calls that needed no approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<AuditApproval>,
    /// With a journal: the call's idempotency key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// Its outcome was read from the journal, not run here (a replay).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
    /// Recovery started it, taking over a call a dead process left.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recovered: bool,
}

/// The approval part of an [`AuditRecord`].
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct AuditApproval {
    /// `approved`, `denied`, or `pending` (the call ended, cancelled, while waiting).
    pub decision: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// ISO 8601 UTC with millis.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decided_at: Option<String>,
    pub edited: bool,
}

/// How far each record is pushed before [`AuditLog::append`] returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AuditSync {
    /// Written and flushed to the operating system: the record survives the process
    /// being killed, not a power loss or an OS crash.
    #[default]
    Flush,
    /// Also `fdatasync`ed: the record is on the storage device, at the cost of one disk
    /// sync per record.
    Fsync,
}

impl AuditSync {
    /// The names the host options use, default first.
    pub const NAMES: &'static [&'static str] = &["flush", "fsync"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "flush" => Some(Self::Flush),
            "fsync" => Some(Self::Fsync),
            _ => None,
        }
    }
}

/// Append-only JSONL audit file, safe to share between threads.
///
/// Each [`append`](AuditLog::append) serialises the record, then under a
/// mutex issues one `write_all` of the whole line (newline included) and
/// flushes, so lines from concurrent appends in this process never
/// interleave. The file is opened with `O_APPEND`. With [`AuditSync::Fsync`]
/// each append also syncs the file's data to the device; otherwise call
/// [`sync`](AuditLog::sync) where durability across power loss matters.
///
/// On Unix, each append first checks that the open file still has a name (one
/// `fstat`), and at most once a second that the path still names it (one `stat`): a
/// file deleted, or moved away by log rotation, is created again at the path, and when
/// that fails (its directory was deleted) the append fails, instead of records going
/// on into a file no path reaches.
#[derive(Debug)]
pub struct AuditLog {
    file: Mutex<OpenFile>,
    path: PathBuf,
    sync: AuditSync,
}

#[derive(Debug)]
struct OpenFile {
    file: File,
    /// Device and inode of `file`, to compare with what the path names now.
    id: Option<(u64, u64)>,
    /// When the path was last checked to name `file`.
    path_checked: Instant,
}

/// How often the path is checked to still name the open file (log rotation).
const PATH_CHECK: Duration = Duration::from_secs(1);

impl OpenFile {
    fn open(path: &Path) -> io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        let id = file_id(&file.metadata()?);
        Ok(Self { file, id, path_checked: Instant::now() })
    }

    /// Whether the file is still reachable at `path`: it has a name (always), and the
    /// path names it (when last checked over [`PATH_CHECK`] ago).
    fn still_at(&mut self, path: &Path) -> bool {
        let Some(id) = self.id else { return true };
        if !has_name(&self.file) {
            return false;
        }
        if self.path_checked.elapsed() < PATH_CHECK {
            return true;
        }
        self.path_checked = Instant::now();
        std::fs::metadata(path).is_ok_and(|m| file_id(&m) == Some(id))
    }
}

#[cfg(unix)]
fn file_id(m: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// Whether an open file still has a link in some directory.
#[cfg(unix)]
fn has_name(file: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    file.metadata().map_or(true, |m| m.nlink() > 0)
}

#[cfg(not(unix))]
fn has_name(_: &File) -> bool {
    true
}

impl AuditLog {
    /// Open `path` for appending, creating the file if needed (never
    /// truncating). Fails if the file cannot be created or written.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        Self::open_with(path, AuditSync::default())
    }

    /// [`AuditLog::open`] with the way each record is synced.
    pub fn open_with(path: impl AsRef<Path>, sync: AuditSync) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = OpenFile::open(&path)?;
        Ok(AuditLog { file: Mutex::new(file), path, sync })
    }

    /// Path the log was opened with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write `record` as exactly one line and flush (and with [`AuditSync::Fsync`],
    /// sync) before returning.
    ///
    /// # Errors
    /// The write's error; when the file was deleted and cannot be created again (its
    /// directory is gone), an error saying so.
    pub fn append(&self, record: &AuditRecord) -> io::Result<()> {
        let mut line = serde_json::to_vec(record).map_err(io::Error::from)?;
        line.push(b'\n');
        // A poisoned lock only means another append panicked; the file
        // handle itself is still usable.
        let mut open = self
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.reopen_if_gone(&mut open)?;
        open.file.write_all(&line)?;
        open.file.flush()?;
        if self.sync == AuditSync::Fsync {
            open.file.sync_data()?;
        }
        Ok(())
    }

    /// Opens the path again when the open file is no longer reachable there.
    fn reopen_if_gone(&self, open: &mut OpenFile) -> io::Result<()> {
        if open.still_at(&self.path) {
            return Ok(());
        }
        match OpenFile::open(&self.path) {
            Ok(reopened) => {
                *open = reopened;
                Ok(())
            }
            Err(e) => Err(io::Error::new(
                e.kind(),
                format!("the file was deleted or moved after it was opened, and creating it again failed: {e}"),
            )),
        }
    }

    /// Flush file data to the storage device (`fsync`-like).
    pub fn sync(&self) -> io::Result<()> {
        let open = self
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        open.file.sync_data()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use crate::clock::{SystemTime, UNIX_EPOCH};

    /// A fresh directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);

    impl TempDir {
        fn new() -> Self {
            static COUNTER: AtomicUsize = AtomicUsize::new(0);
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_nanos();
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let dir = std::env::temp_dir()
                .join(format!("toolhost-audit-{}-{n}-{nanos}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn record(id: &str) -> AuditRecord {
        AuditRecord {
            execution_id: id.to_owned(),
            tool_call_id: Some("call_1".into()),
            session_id: None,
            tool_name: "search".into(),
            input_hash: "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862".into(),
            started_at: "2026-11-21T00:00:00.000Z".into(),
            finished_at: "2026-11-21T00:00:00.012Z".into(),
            duration_ms: 12.5,
            status: "success".into(),
            attempts: 1,
            error_code: None,
            approval: None,
            idempotency_key: None,
            replayed: false,
            recovered: false,
        }
    }

    #[test]
    fn record_serde_shape() {
        let rec = record("ex-1");
        let json: serde_json::Value = serde_json::to_value(&rec).unwrap();
        let obj = json.as_object().unwrap();
        for key in [
            "executionId",
            "toolCallId",
            "sessionId",
            "toolName",
            "inputHash",
            "startedAt",
        ] {
            assert!(obj.contains_key(key), "missing {key}");
        }
        assert!(obj["sessionId"].is_null());
        assert!(!obj.contains_key("errorCode"));
        assert_eq!(serde_json::from_value::<AuditRecord>(json).unwrap(), rec);

        let failed = AuditRecord {
            status: "error".into(),
            error_code: Some("TIMEOUT".into()),
            ..record("ex-2")
        };
        let text = serde_json::to_string(&failed).unwrap();
        assert!(text.contains(r#""errorCode":"TIMEOUT""#));
        assert_eq!(serde_json::from_str::<AuditRecord>(&text).unwrap(), failed);
    }

    #[test]
    fn append_writes_one_line_each_and_reopen_appends() {
        let dir = TempDir::new();
        let path = dir.0.join("audit.jsonl");
        let log = AuditLog::open(&path).unwrap();
        assert_eq!(log.path(), path);
        log.append(&record("a")).unwrap();
        log.append(&record("b")).unwrap();
        log.sync().unwrap();
        drop(log);
        AuditLog::open(&path).unwrap().append(&record("c")).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with('\n'));
        let ids: Vec<String> = text
            .lines()
            .map(|l| serde_json::from_str::<AuditRecord>(l).unwrap().execution_id)
            .collect();
        assert_eq!(ids, ["a", "b", "c"]);
    }

    #[test]
    fn concurrent_appends_never_interleave() {
        let dir = TempDir::new();
        let path = dir.0.join("audit.jsonl");
        let log = Arc::new(AuditLog::open(&path).unwrap());
        let handles: Vec<_> = (0..8)
            .map(|t| {
                let log = Arc::clone(&log);
                std::thread::spawn(move || {
                    for i in 0..125 {
                        log.append(&record(&format!("t{t}-{i}"))).unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1000);
        let ids: HashSet<String> = lines
            .iter()
            .map(|l| serde_json::from_str::<AuditRecord>(l).unwrap().execution_id)
            .collect();
        assert_eq!(ids.len(), 1000);
    }

    #[cfg(unix)]
    #[test]
    fn a_deleted_file_is_created_again_and_a_deleted_directory_is_an_error() {
        let dir = TempDir::new();
        let sub = dir.0.join("logs");
        std::fs::create_dir(&sub).unwrap();
        let path = sub.join("audit.jsonl");
        let log = AuditLog::open_with(&path, AuditSync::Fsync).unwrap();
        log.append(&record("a")).unwrap();
        std::fs::remove_file(&path).unwrap();
        log.append(&record("b")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1, "b went to a new file at the path");
        std::fs::rename(&path, sub.join("audit.jsonl.1")).unwrap();
        log.file.lock().unwrap().path_checked -= PATH_CHECK;
        log.append(&record("c")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1, "c went to a new file, not the rotated one");
        std::fs::remove_dir_all(&sub).unwrap();
        let err = log.append(&record("d")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(err.to_string().contains("deleted"), "{err}");
        // Once the directory is back, records are written again.
        std::fs::create_dir(&sub).unwrap();
        log.append(&record("e")).unwrap();
        assert!(std::fs::read_to_string(&path).unwrap().contains("\"e\""));
    }

    #[test]
    fn sync_modes_by_name() {
        assert_eq!(AuditSync::parse("flush"), Some(AuditSync::Flush));
        assert_eq!(AuditSync::parse("fsync"), Some(AuditSync::Fsync));
        assert_eq!(AuditSync::parse("sync"), None);
        assert_eq!(AuditSync::default(), AuditSync::Flush);
    }

    #[test]
    fn open_on_unwritable_path_errors() {
        let dir = TempDir::new();
        let missing_parent = dir.0.join("no").join("such").join("audit.jsonl");
        assert_eq!(
            AuditLog::open(&missing_parent).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        // A directory cannot be opened for appending (even as root).
        assert!(AuditLog::open(&dir.0).is_err());
    }
}
