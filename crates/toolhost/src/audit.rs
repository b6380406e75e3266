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

/// Append-only JSONL audit file, safe to share between threads.
///
/// Each [`append`](AuditLog::append) serialises the record, then under a
/// mutex issues one `write_all` of the whole line (newline included) and
/// flushes, so lines from concurrent appends in this process never
/// interleave. The file is opened with `O_APPEND`. No `fsync` is done:
/// call [`sync`](AuditLog::sync) where durability across crashes matters.
#[derive(Debug)]
pub struct AuditLog {
    file: Mutex<File>,
    path: PathBuf,
}

impl AuditLog {
    /// Open `path` for appending, creating the file if needed (never
    /// truncating). Fails if the file cannot be created or written.
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        Ok(AuditLog {
            file: Mutex::new(file),
            path,
        })
    }

    /// Path the log was opened with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write `record` as exactly one line and flush before returning.
    pub fn append(&self, record: &AuditRecord) -> io::Result<()> {
        let mut line = serde_json::to_vec(record).map_err(io::Error::from)?;
        line.push(b'\n');
        // A poisoned lock only means another append panicked; the file
        // handle itself is still usable.
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        file.write_all(&line)?;
        file.flush()
    }

    /// Flush file data to the storage device (`fsync`-like).
    pub fn sync(&self) -> io::Result<()> {
        let file = self
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        file.sync_data()
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
