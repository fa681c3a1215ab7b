//! Several clients sharing one corpus: a broker forked here (LLMP, on the broker port)
//! and LibAFL's launcher forking one client per slot (each with its own fork server and
//! target processes, its report files under `OUT/work/<n>/` and `stats-<n>.json`). New
//! corpus entries travel between clients through the broker; with `--broker HOST:PORT`
//! the broker also links to another machine's (broker-to-broker over TCP). With
//! `--gpus N`, client `n` sees only GPU `n % N` (`CUDA_VISIBLE_DEVICES`); otherwise all
//! clients share the visible GPUs.

use std::net::{SocketAddr, TcpStream};
use std::num::NonZeroUsize;
use std::time::{Duration, Instant};

use libafl::events::{ClientDescription, EventConfig, Launcher, StdLlmpEventHook};
use libafl::inputs::BytesInput;
use libafl::monitors::MultiMonitor;
use libafl_bolts::core_affinity::Cores;
use libafl_bolts::llmp::LlmpBroker;
use libafl_bolts::shmem::{ShMemProvider, StdShMemProvider};
use libafl_bolts::tuples::tuple_list;
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{fork, ForkResult, Pid};

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
    /// A broker on another machine that this machine's broker links to.
    pub remote_broker: Option<SocketAddr>,
    /// GPUs to deal clients over (`None`: do not touch `CUDA_VISIBLE_DEVICES`).
    pub gpus: Option<usize>,
}

/// Runs `spread.clients` clients of the campaign; returns when they have all ended.
/// Client ids (and so their file names) start at 1.
pub fn run(target: &Target, settings: &Settings, spread: &Spread) -> Result<()> {
    let clients = NonZeroUsize::new(spread.clients)
        .ok_or_else(|| Error::Usage("--clients must be at least 1".into()))?;
    let origin = std::process::id();
    let cores = Cores::from((0..spread.clients).collect::<Vec<_>>());
    let provider = StdShMemProvider::new()?;
    let quiet = settings.quiet;
    let broker = spawn_broker(provider.clone(), spread, clients, quiet)?;
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
        .monitor(MultiMonitor::new(|_| {}))
        .run_client(run_client)
        .cores(&cores)
        .broker_port(spread.broker_port)
        .spawn_broker(false)
        .build()
        .launch::<BytesInput, ClientState>();
    if std::process::id() != origin {
        // The clients' restarters return here too: only the process that started the
        // campaign goes on to summarise it.
        std::process::exit(0);
    }
    stop_broker(broker);
    match launched {
        Ok(()) | Err(libafl::Error::ShuttingDown) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Forks the broker: clients on this machine attach to it on `spread.broker_port`, and
/// with `spread.remote_broker` it links to that broker (LLMP broker-to-broker over
/// TCP), so that corpus entries flow both ways. It is ours, not the launcher's: LibAFL
/// 0.16's launcher drops `remote_broker_addr` on its way to the broker it spawns (the
/// restarting manager passes `None`), and no entry ever crossed. Returns the broker's
/// pid once it accepts connections.
fn spawn_broker(
    provider: StdShMemProvider,
    spread: &Spread,
    clients: NonZeroUsize,
    quiet: bool,
) -> Result<Pid> {
    // SAFETY: single-threaded here (no client or broker thread exists yet).
    let pid = match unsafe { fork() } {
        Ok(ForkResult::Parent { child }) => child,
        Ok(ForkResult::Child) => {
            let code = match broker_loop(provider, spread, clients, quiet) {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("cusafe fuzz (broker): error: {e}");
                    2
                }
            };
            std::process::exit(code);
        }
        Err(e) => return Err(Error::io("cannot fork the broker", std::io::Error::from(e))),
    };
    // Clients attach once the broker listens (it may fail, e.g. a port in use).
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", spread.broker_port)).is_err() {
        if !matches!(
            waitpid(pid, Some(WaitPidFlag::WNOHANG)),
            Ok(WaitStatus::StillAlive)
        ) {
            return Err(Error::Usage(format!(
                "the broker could not start on port {} (see its error above); pick another \
                 with --broker-port",
                spread.broker_port
            )));
        }
        if start.elapsed() > Duration::from_secs(30) {
            return Err(Error::Usage(format!(
                "the broker did not listen on port {} within 30 s",
                spread.broker_port
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(pid)
}

/// Waits for the broker to end after the clients: it ends by itself when every local
/// client has (`set_exit_cleanly_after`), but a broker-to-broker link counts as a client
/// that never leaves, so after a grace second it is told to stop (SIGTERM, which LLMP
/// handles as a shutdown).
fn stop_broker(broker: Pid) {
    let start = Instant::now();
    while matches!(
        waitpid(broker, Some(WaitPidFlag::WNOHANG)),
        Ok(WaitStatus::StillAlive)
    ) {
        if start.elapsed() > Duration::from_secs(1) {
            let _ = kill(broker, Signal::SIGTERM);
            let _ = waitpid(broker, None);
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn broker_loop(
    provider: StdShMemProvider,
    spread: &Spread,
    clients: NonZeroUsize,
    quiet: bool,
) -> Result<()> {
    let monitor = MultiMonitor::new(move |s| {
        if !quiet {
            eprintln!("cusafe fuzz (broker): {s}");
        }
    });
    let hook = StdLlmpEventHook::<BytesInput, _>::new(monitor)?;
    let mut broker =
        LlmpBroker::create_attach_to_tcp(provider, tuple_list!(hook), spread.broker_port)?;
    if let Some(remote) = spread.remote_broker {
        broker.inner_mut().connect_b2b(remote).map_err(|e| {
            Error::Usage(format!(
                "cannot join the broker at {remote} ({e}): is a campaign with --clients > 1 \
                 running there, and its --broker-port reachable from here?"
            ))
        })?;
    }
    broker.inner_mut().set_exit_cleanly_after(clients);
    broker.loop_with_timeouts(Duration::from_secs(30), Some(Duration::from_millis(5)));
    Ok(())
}
