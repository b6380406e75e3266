//! A real Postgres server for the journal tests: Debian's `postgresql` (15), a cluster
//! made with `initdb` in a temporary folder, started with `pg_ctl` on a free loopback
//! port, stopped (and the folder removed) when dropped. Postgres refuses to run as root,
//! so as root the cluster belongs to, and runs as, the `postgres` user.
//!
//! `npm test` installs the package when it is missing (`scripts/postgres.mjs`); run alone,
//! the tests say how.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Cluster {
    dir: PathBuf,
    bin: PathBuf,
    as_postgres: bool,
    pub url: String,
}

fn bin_dir() -> PathBuf {
    let root = Path::new("/usr/lib/postgresql");
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(root)
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, p): &(u32, PathBuf)| p.join("initdb").exists())
        .collect();
    versions.sort();
    versions.pop().map(|(_, p)| p).unwrap_or_else(|| {
        panic!("the journal tests need Debian's postgresql (initdb, pg_ctl): `node scripts/postgres.mjs --install` installs it (npm test does)")
    })
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn run(cluster_as_postgres: bool, program: &Path, args: &[&str]) {
    let mut cmd = if cluster_as_postgres {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    let out = cmd.args(args).output().unwrap_or_else(|e| panic!("{} could not start: {e}", program.display()));
    assert!(out.status.success(), "{} {args:?} failed: {}{}", program.display(), String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

impl Cluster {
    pub fn start() -> Self {
        let bin = bin_dir();
        let as_postgres = is_root();
        let dir = std::env::temp_dir().join(format!("toolhost-pg-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        if as_postgres {
            let status = Command::new("chown").args(["-R", "postgres:postgres"]).arg(&dir).status().unwrap();
            assert!(status.success(), "chown postgres {}", dir.display());
        }
        let data = dir.join("data");
        let data = data.to_str().unwrap();
        run(as_postgres, &bin.join("initdb"), &["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let options = format!("-p {port} -k {} -c listen_addresses=127.0.0.1 -c max_connections=200", dir.display());
        let log = dir.join("log");
        run(as_postgres, &bin.join("pg_ctl"), &["-D", data, "-o", &options, "-l", log.to_str().unwrap(), "-w", "start"]);
        Self { url: format!("postgres://postgres@127.0.0.1:{port}/postgres"), dir, bin, as_postgres }
    }

    /// A database of its own (each test gets a clean journal).
    pub fn database(&self, name: &str) -> String {
        let mut admin = postgres::Client::connect(&self.url, postgres::NoTls).expect("connect to the test cluster");
        admin.batch_execute(&format!("DROP DATABASE IF EXISTS {name}")).unwrap();
        admin.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        format!("{}/{name}", self.url.rsplit_once('/').expect("the cluster URL ends with its database").0)
    }
}

impl Cluster {
    /// The server's main process, whose children are the rest of it (the first line of
    /// its `postmaster.pid`).
    pub fn postmaster_pid(&self) -> i32 {
        let text = std::fs::read_to_string(self.dir.join("data").join("postmaster.pid")).expect("the running cluster's postmaster.pid");
        text.lines().next().and_then(|l| l.trim().parse().ok()).expect("postmaster.pid starts with the pid")
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(self.bin.join("pg_ctl"));
            c
        } else {
            Command::new(self.bin.join("pg_ctl"))
        };
        let _ = cmd.args(["-D", data.to_str().unwrap(), "-m", "immediate", "-w", "stop"]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
