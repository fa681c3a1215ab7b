//! Several clients sharing one corpus through LibAFL's launcher and LLMP broker: the
//! launcher forks one client per slot (each with its own fork server and target
//! processes, its report files under `OUT/work/<n>/` and `stats-<n>.json`), new corpus
//! entries travel between clients through the broker, and clients on other machines
//! join with `--broker HOST:PORT`. With `--gpus N`, client `n` sees only GPU `n % N`
//! (`CUDA_VISIBLE_DEVICES`); otherwise all clients share the visible GPUs.

use std::net::SocketAddr;

use libafl::events::{ClientDescription, EventConfig, Launcher};
use libafl::monitors::MultiMonitor;
use libafl_bolts::core_affinity::Cores;
use libafl_bolts::shmem::{ShMemProvider, StdShMemProvider};

use crate::campaign::{self, ClientState, Settings};
use crate::target::Target;
use crate::{Error, Result};

/// How clients are spread.
#[derive(Clone, Debug)]
pub struct Spread {
    /// Clients on this machine.
    pub clients: usize,
    /// The broker's TCP port on this machine.
    pub broker_port: u16,
    /// A broker on another machine to join instead of starting one here.
    pub remote_broker: Option<SocketAddr>,
    /// GPUs to deal clients over (`None`: do not touch `CUDA_VISIBLE_DEVICES`).
    pub gpus: Option<usize>,
}

/// Runs `spread.clients` clients of the campaign; returns when they have all ended.
/// Client ids (and so their file names) start at 1.
pub fn run(target: &Target, settings: &Settings, spread: &Spread) -> Result<()> {
    if spread.clients == 0 {
        return Err(Error::Usage("--clients must be at least 1".into()));
    }
    let origin = std::process::id();
    let cores = Cores::from((0..spread.clients).collect::<Vec<_>>());
    let provider = StdShMemProvider::new()?;
    let quiet = settings.quiet;
    let monitor = MultiMonitor::new(move |s| {
        if !quiet {
            eprintln!("cusafe fuzz (broker): {s}");
        }
    });
    let run_client = |_state: Option<ClientState>, mgr, client: ClientDescription| {
        let id = client.id();
        let mut s = settings.clone();
        s.visible_device = spread.gpus.map(|n| id % n.max(1));
        match campaign::run_with(target, &s, id, mgr) {
            // The client is a forked process: it ends here, the launcher's parent
            // waits for it.
            Ok(_) => std::process::exit(0),
            Err(e) => {
                eprintln!("cusafe fuzz: client {id}: error: {e}");
                std::process::exit(2)
            }
        }
    };
    let launched = Launcher::builder()
        .shmem_provider(provider)
        .configuration(EventConfig::from_name("cusafe-fuzz"))
        .monitor(monitor)
        .run_client(run_client)
        .cores(&cores)
        .broker_port(spread.broker_port)
        .remote_broker_addr(spread.remote_broker)
        .build()
        .launch::<libafl::inputs::BytesInput, ClientState>();
    if std::process::id() != origin {
        // The broker and the clients' restarters return here too: only the process
        // that started the campaign goes on to summarise it.
        std::process::exit(0);
    }
    match launched {
        Ok(()) | Err(libafl::Error::ShuttingDown) => Ok(()),
        Err(e) => Err(e.into()),
    }
}
