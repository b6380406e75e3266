//! The journal's schema, as numbered migrations applied in order (as sqlx and refinery
//! do). The version applied is stored in the database (`toolhost_meta`); a database
//! whose version is newer than this build knows is refused, never guessed at.

/// One migration: its number (from 1, consecutive) and its SQL.
#[derive(Debug)]
pub struct Migration {
    pub version: i64,
    pub sql: &'static str,
}

/// SQLite's migrations.
pub const SQLITE: &[Migration] = &[
    Migration { version: 1, sql: include_str!("migrations/sqlite/0001_calls.sql") },
    Migration { version: 2, sql: include_str!("migrations/sqlite/0002_tasks.sql") },
];

/// Postgres's migrations.
pub const POSTGRES: &[Migration] = &[
    Migration { version: 1, sql: include_str!("migrations/postgres/0001_calls.sql") },
    Migration { version: 2, sql: include_str!("migrations/postgres/0002_tasks.sql") },
];

/// The table that records the applied version, created before any migration.
pub const META_TABLE: &str = "CREATE TABLE IF NOT EXISTS toolhost_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)";

/// The version this build writes.
pub fn latest(migrations: &[Migration]) -> i64 {
    migrations.last().map_or(0, |m| m.version)
}

/// The migrations to apply on a database at `current`.
///
/// # Errors
/// `JOURNAL_SCHEMA_NEWER` when the database is newer than this build.
pub fn pending(migrations: &'static [Migration], current: i64, what: &str) -> Result<&'static [Migration], super::JournalError> {
    let latest = latest(migrations);
    if current > latest {
        return Err(super::JournalError {
            code: crate::error::RegistryErrorCode::JournalSchemaNewer,
            message: format!(
                "the journal {what} has schema version {current}, newer than this toolhost knows ({latest}): it was written by a newer toolhost; upgrade toolhost, or use another database"
            ),
            lasting: false,
            maybe_written: false,
        });
    }
    Ok(&migrations[migrations.iter().take_while(|m| m.version <= current).count()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_consecutive_from_one() {
        for set in [SQLITE, POSTGRES] {
            for (i, m) in set.iter().enumerate() {
                assert_eq!(m.version, i as i64 + 1);
            }
        }
        assert_eq!(latest(SQLITE), latest(POSTGRES), "both stores hold the same schema");
    }

    #[test]
    fn a_newer_database_is_refused_and_an_older_one_gets_what_it_lacks() {
        assert_eq!(pending(SQLITE, 0, "x").unwrap().len(), SQLITE.len());
        assert!(pending(SQLITE, latest(SQLITE), "x").unwrap().is_empty());
        let e = pending(SQLITE, latest(SQLITE) + 1, "at x").unwrap_err();
        assert_eq!(e.code, crate::error::RegistryErrorCode::JournalSchemaNewer);
        assert!(e.message.contains("newer than this toolhost knows"), "{}", e.message);
    }
}
