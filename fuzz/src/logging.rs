//! LibAFL's own log (the `log` crate) on stderr when `CUSAFE_FUZZ_LOG` names a level
//! (`error`, `warn`, `info`, `debug`, `trace`): what the executor, the launcher and the
//! broker say about fork servers, clients and broker links, for debugging a campaign.

use log::{LevelFilter, Log, Metadata, Record};

/// The variable that turns the log on.
pub const LOG_ENV: &str = "CUSAFE_FUZZ_LOG";

struct Stderr;

impl Log for Stderr {
    fn enabled(&self, m: &Metadata) -> bool {
        m.level() <= log::max_level()
    }

    fn log(&self, r: &Record) {
        if self.enabled(r.metadata()) {
            eprintln!(
                "cusafe fuzz [{} {} pid {}]: {}",
                r.level(),
                r.target(),
                std::process::id(),
                r.args()
            );
        }
    }

    fn flush(&self) {}
}

static LOGGER: Stderr = Stderr;

/// Installs the stderr log at the level `CUSAFE_FUZZ_LOG` names; an unknown level is an
/// error that lists the accepted ones. Without the variable, nothing is logged.
pub fn init_from_env() -> crate::Result<()> {
    let Ok(v) = std::env::var(LOG_ENV) else {
        return Ok(());
    };
    let level: LevelFilter = v.parse().map_err(|_| {
        crate::Error::Usage(format!(
            "{LOG_ENV}={v}: use one of error, warn, info, debug, trace (or unset it)"
        ))
    })?;
    // A second campaign in the same process keeps the logger it has.
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
    Ok(())
}
