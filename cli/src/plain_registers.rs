//! The plain build's register counts for the launch-resource warning. After an
//! instrumented compile in which `cusafe-fatbinary` found kernels past 64 registers
//! without launch bounds (`resources`), `cusafe-clang++` compiles each CUDA source's
//! device code once more without instrumentation (`--cuda-device-only -c` into a
//! temporary cubin, the user's flags minus outputs, dependency files and link inputs)
//! and names both counts. It costs a second device compile only when there is
//! something to warn about; when that compile cannot be made (a response file, several
//! GPU architectures) or fails, the warning goes out without the plain count.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;

use crate::clangxx::CommandLine;
use crate::locate::Lookup;
use crate::resources::{self, Heavy};

/// Flags that name an output, a dependency file or a link input: dropped with their
/// value.
const DROP_WITH_VALUE: &[&str] = &[
    "-o",
    "-MF",
    "-MT",
    "-MQ",
    "-MJ",
    "-l",
    "-Xlinker",
    "-dependency-file",
    "-dependency-dot",
];

/// Flags that choose what the command produces: dropped.
const DROP: &[&str] = &[
    "-c",
    "-S",
    "-E",
    "-M",
    "-MM",
    "-MD",
    "-MMD",
    "-MP",
    "-MG",
    "-fsyntax-only",
    "-shared",
    "-r",
    "-static",
    "-pie",
    "-no-pie",
    "--cuda-device-only",
    "--offload-device-only",
];

/// Link and host-sanitizer flags, by prefix: dropped (as are the joined forms of
/// [`DROP_WITH_VALUE`], `-ofile`, `-MFdeps.d`, `-lm`).
const DROP_PREFIXES: &[&str] = &["-Wl,", "-fsanitize", "-fno-sanitize"];

/// The arguments of a plain device-only compile of `source` into `output`, from the
/// user's arguments `args` (ours already taken out); `None` when they hold a response
/// file, whose words cannot be filtered.
pub fn device_args(args: &[OsString], source: &str, output: &Path) -> Option<Vec<OsString>> {
    let mut out: Vec<OsString> = Vec::new();
    let mut arch_seen = false;
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let text = arg.to_string_lossy();
        if text.starts_with('@') {
            return None;
        }
        if !text.starts_with('-') || text == "-" {
            continue;
        }
        if DROP_WITH_VALUE.contains(&text.as_ref()) {
            iter.next();
            continue;
        }
        if crate::clangxx::takes_value(&text) {
            out.push(arg.clone());
            out.extend(iter.next().cloned());
            continue;
        }
        let joined = |p: &&str| text.len() > p.len() && text.starts_with(p);
        if DROP.contains(&text.as_ref())
            || DROP_PREFIXES.iter().any(joined)
            || DROP_WITH_VALUE.iter().any(joined)
        {
            continue;
        }
        // One architecture: a device-only compile of several cannot have one output.
        let arch = text.starts_with("--cuda-gpu-arch=") || text.starts_with("--offload-arch=");
        if arch && std::mem::replace(&mut arch_seen, true) {
            continue;
        }
        out.push(arg.clone());
    }
    out.extend(
        [
            "--cusafe-no-instrument",
            "--cuda-device-only",
            "-c",
            "-x",
            "cuda",
            source,
            "-x",
            "none",
            "-o",
        ]
        .map(OsString::from),
    );
    out.push(output.as_os_str().to_owned());
    Some(out)
}

/// Registers per thread of the plain build's kernels, over every CUDA source of `cmd`
/// (empty where a compile could not be made or failed), compiled in `dir`.
pub fn plain_counts(cmd: &CommandLine, locator: &impl Lookup, dir: &Path) -> HashMap<String, u32> {
    let mut counts = HashMap::new();
    for (i, source) in cmd.cuda_sources.iter().enumerate() {
        let output = dir.join(format!("plain-{i}.cubin"));
        let Some(args) = device_args(&cmd.args, source, &output) else {
            break;
        };
        let Ok(plain) = CommandLine::parse(args) else {
            continue;
        };
        let Ok(command) = plain.plan(locator) else {
            continue;
        };
        let built = std::process::Command::new(&command.program)
            .args(&command.args)
            .envs(command.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if let (true, Ok(cubin)) = (built, std::fs::read(&output)) {
            counts.extend(resources::kernel_registers(&cubin));
        }
    }
    counts
}

/// Prints the warnings of the kernels `cusafe-fatbinary` listed in `report` (a
/// [`resources::REPORT_ENV`] file), each with its plain build's count.
pub fn warn(cmd: &CommandLine, locator: &impl Lookup, report: &Path) {
    let text = std::fs::read_to_string(report).unwrap_or_default();
    let mut heavy = Heavy::read_report(&text);
    if heavy.is_empty() {
        return;
    }
    let counts = match report.parent() {
        Some(dir) => plain_counts(cmd, locator, dir),
        None => HashMap::new(),
    };
    for h in &mut heavy {
        h.plain = counts.get(&h.mangled).copied();
        eprintln!("{}", h.warning());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<OsString> {
        s.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn outputs_dependency_files_and_link_inputs_are_dropped() {
        let args = words(
            "-O2 -I inc -DN=4 -c a.cu -o a.o -MD -MF a.d -MTa.o -lm -Wl,--as-needed \
             -Xlinker -z -fsanitize=address -Xcuda-ptxas -maxrregcount=80 -std=c++17 b.o",
        );
        let got = device_args(&args, "a.cu", Path::new("/t/p.cubin")).unwrap();
        assert_eq!(
            got,
            words(
                "-O2 -I inc -DN=4 -Xcuda-ptxas -maxrregcount=80 -std=c++17 \
                 --cusafe-no-instrument --cuda-device-only -c -x cuda a.cu -x none -o /t/p.cubin"
            )
        );
    }

    #[test]
    fn one_architecture_is_kept_and_response_files_give_up() {
        let args = words("--cuda-gpu-arch=sm_90 --cuda-gpu-arch=sm_80 k.cu");
        let got = device_args(&args, "k.cu", Path::new("o")).unwrap();
        assert_eq!(got[0], "--cuda-gpu-arch=sm_90");
        assert!(!got.contains(&OsString::from("--cuda-gpu-arch=sm_80")));
        assert!(device_args(&words("@flags k.cu"), "k.cu", Path::new("o")).is_none());
    }
}
