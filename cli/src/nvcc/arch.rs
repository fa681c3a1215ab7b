//! GPU architectures: nvcc's `-arch`, `-code` and `-gencode` read into the list of
//! `--cuda-gpu-arch=sm_NN` flags clang takes.
//!
//! nvcc separates virtual architectures (`compute_NN`, PTX) from real ones (`sm_NN`,
//! SASS). clang compiles each `--cuda-gpu-arch=sm_NN` into both, SASS and PTX for that
//! architecture, so every architecture named becomes one `sm_NN`: `-arch=sm_80` (SASS
//! and PTX for 80, as in nvcc), `-arch=compute_80` (nvcc: PTX only; here also SASS),
//! `-gencode arch=compute_70,code=sm_80` (SASS for 80; the PTX is 80's too, not 70's),
//! `code=[sm_80,sm_90]` and `code=compute_90` (sm_90).

use super::Error;

/// One `-arch`, `-code` or `-gencode` value as written, with the flag it came with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The flag and value as the user wrote them (for messages).
    pub flag: String,
    /// The value.
    pub value: String,
}

/// The GPU options of a command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuOptions {
    /// `-arch` values.
    pub arch: Vec<Written>,
    /// `-code` values.
    pub code: Vec<Written>,
    /// `-gencode` values.
    pub gencode: Vec<Written>,
}

/// Finds the architectures of the GPUs in this machine (`-arch=native`).
pub trait Native {
    /// `sm_NN` names, or why there are none.
    fn native_archs(&self) -> Result<Vec<String>, String>;
}

const NAME_FIX: &str = "name an architecture such as -arch=sm_90 (H100/H200), sm_89 \
    (L4/L40), sm_86 (A10/RTX 30), sm_80 (A100) or sm_70 (V100)";

impl GpuOptions {
    /// The `sm_NN` names to compile for, in order, each once.
    pub fn sm_names(&self, native: &impl Native) -> Result<Vec<String>, Error> {
        let mut out: Vec<String> = Vec::new();
        let mut add = |names: Vec<String>| {
            for name in names {
                if !out.contains(&name) {
                    out.push(name);
                }
            }
        };
        if self.code.is_empty() {
            for w in &self.arch {
                for value in super::words::list(&w.value) {
                    add(arch_value(w, &value, native)?);
                }
            }
        } else {
            // -code names what is built; -arch (a virtual architecture) only says what
            // the code is compiled from, which clang has no separate notion of.
            for w in &self.arch {
                for value in super::words::list(&w.value) {
                    check_name(w, &value)?;
                }
            }
            for w in &self.code {
                for value in super::words::list(&w.value) {
                    add(vec![sm_name(w, &value)?]);
                }
            }
        }
        for w in &self.gencode {
            add(gencode(w)?);
        }
        Ok(out)
    }
}

/// One `-arch` value: `sm_NN`/`compute_NN`, or `native`; `all` and `all-major` refused.
fn arch_value(w: &Written, value: &str, native: &impl Native) -> Result<Vec<String>, Error> {
    match value {
        "native" => native.native_archs().map_err(|why| Error {
            subject: w.flag.clone(),
            why: format!("cannot tell this machine's GPU ({why})"),
            fix: format!("build on the GPU machine, or {NAME_FIX}"),
        }),
        "all" | "all-major" => Err(Error {
            subject: w.flag.clone(),
            why: "building for every architecture is not supported (clang 19 and \
                  cusafe's pass are tested on sm_70 and newer, and each architecture is \
                  a full device compile)"
                .into(),
            fix: format!(
                "name the architectures you run on (several -gencode or -arch flags); {NAME_FIX}"
            ),
        }),
        _ => Ok(vec![sm_name(w, value)?]),
    }
}

/// `sm_NN` for an architecture name (`sm_NN`, `compute_NN`, optionally with the `a`
/// suffix of architecture-specific features).
fn sm_name(w: &Written, name: &str) -> Result<String, Error> {
    let number = check_name(w, name)?;
    Ok(format!("sm_{number}"))
}

/// The `NN` (with its suffix) of an architecture name, or the error naming it.
fn check_name<'a>(w: &Written, name: &'a str) -> Result<&'a str, Error> {
    if name.starts_with("lto_") {
        return Err(Error {
            subject: w.flag.clone(),
            why: format!(
                "{name}: LTO device code needs nvlink, which cusafe's CUDA tree does not have"
            ),
            fix: "use sm_NN or compute_NN".into(),
        });
    }
    let number = name
        .strip_prefix("sm_")
        .or_else(|| name.strip_prefix("compute_"))
        .filter(|n| {
            let digits = n.strip_suffix('a').unwrap_or(n);
            (2..=3).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
        });
    number.ok_or_else(|| Error {
        subject: w.flag.clone(),
        why: format!("'{name}' is not a GPU architecture (sm_NN or compute_NN)"),
        fix: NAME_FIX.into(),
    })
}

/// The `sm_NN` names of one `-gencode arch=A,code=C` value. `code` may be one name, a
/// bracketed list (`code=[sm_80,sm_90]`) or a quoted one (`code="sm_80,compute_80"`);
/// without `code`, the `arch` is built.
fn gencode(w: &Written) -> Result<Vec<String>, Error> {
    let bad = |why: String| Error {
        subject: w.flag.clone(),
        why,
        fix: "write -gencode arch=compute_NN,code=sm_NN (code may be a list: \
              code=[sm_80,sm_90])"
            .into(),
    };
    let mut arch = None;
    let mut code = Vec::new();
    for part in split_top_level(&w.value) {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| bad(format!("'{part}' is not key=value")))?;
        let value = value.trim_matches(|c| matches!(c, '"' | '\'' | '[' | ']'));
        match key {
            "arch" => arch = Some(value.to_owned()),
            "code" => code.extend(super::words::list(value)),
            _ => return Err(bad(format!("unknown key '{key}' (arch and code are)"))),
        }
    }
    let arch = arch.ok_or_else(|| bad("arch= is missing".into()))?;
    check_name(w, &arch)?;
    if code.is_empty() {
        code.push(arch);
    }
    code.iter().map(|c| sm_name(w, c)).collect()
}

/// Splits at commas outside brackets and quotes (`arch=compute_80,code=[sm_80,sm_90]`).
fn split_top_level(value: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for c in value.chars() {
        match (c, quote) {
            ('"' | '\'', None) => quote = Some(c),
            (q, Some(open)) if q == open => quote = None,
            ('[', None) => depth += 1,
            (']', None) => depth = depth.saturating_sub(1),
            (',', None) if depth == 0 => {
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = parts.last_mut() {
            last.push(c);
        }
    }
    parts.retain(|p| !p.is_empty());
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Gpu(Result<Vec<String>, String>);

    impl Native for Gpu {
        fn native_archs(&self) -> Result<Vec<String>, String> {
            self.0.clone()
        }
    }

    /// For rows without `-arch=native` (never asked).
    const UNASKED: Gpu = Gpu(Ok(Vec::new()));

    fn w(flag: &str, value: &str) -> Written {
        Written {
            flag: format!("{flag} {value}"),
            value: value.into(),
        }
    }

    fn names(opts: GpuOptions) -> Result<Vec<String>, String> {
        opts.sm_names(&UNASKED).map_err(|e| e.to_string())
    }

    /// `-arch` values, `-code` values, `-gencode` values, the expected `sm_NN` names.
    type Row = (
        &'static [&'static str],
        &'static [&'static str],
        &'static [&'static str],
        &'static [&'static str],
    );

    #[test]
    fn every_named_architecture_becomes_one_sm() {
        let table: &[Row] = &[
            (&["sm_80"], &[], &[], &["sm_80"]),
            (&["compute_75"], &[], &[], &["sm_75"]),
            (&["sm_90a"], &[], &[], &["sm_90a"]),
            (&["sm_80,sm_90"], &[], &[], &["sm_80", "sm_90"]),
            (&["compute_80"], &["sm_80,sm_86"], &[], &["sm_80", "sm_86"]),
            (&["compute_80"], &["compute_80"], &[], &["sm_80"]),
            (&[], &[], &["arch=compute_80,code=sm_80"], &["sm_80"]),
            (
                &[],
                &[],
                &["arch=compute_80,code=sm_80", "arch=compute_90,code=sm_90"],
                &["sm_80", "sm_90"],
            ),
            (
                &[],
                &[],
                &["arch=compute_80,code=[sm_80,sm_86]"],
                &["sm_80", "sm_86"],
            ),
            (
                &[],
                &[],
                &["arch=compute_90,code=\"sm_90,compute_90\""],
                &["sm_90"],
            ),
            (&[], &[], &["arch=compute_90,code=compute_90"], &["sm_90"]),
            (&[], &[], &["arch=compute_70"], &["sm_70"]),
            (
                &["sm_80"],
                &[],
                &["arch=compute_90,code=sm_90"],
                &["sm_80", "sm_90"],
            ),
        ];
        for (arch, code, gencode, expected) in table {
            let opts = GpuOptions {
                arch: arch.iter().map(|v| w("-arch", v)).collect(),
                code: code.iter().map(|v| w("-code", v)).collect(),
                gencode: gencode.iter().map(|v| w("-gencode", v)).collect(),
            };
            assert_eq!(
                names(opts).unwrap(),
                *expected,
                "{arch:?} {code:?} {gencode:?}"
            );
        }
    }

    #[test]
    fn bad_values_are_errors_naming_the_flag() {
        for (arch, gencode, says) in [
            ("sm_8", "", "'sm_8' is not a GPU architecture"),
            ("gfx90a", "", "'gfx90a' is not"),
            ("all", "", "every architecture"),
            ("all-major", "", "every architecture"),
            ("lto_90", "", "LTO device code"),
            ("", "arch=compute_80,code=sm_xx", "'sm_xx' is not"),
            ("", "code=sm_80", "arch= is missing"),
            ("", "arch=compute_80,cod=sm_80", "unknown key 'cod'"),
            ("", "compute_80", "is not key=value"),
            ("", "arch=compute_80,code=lto_80", "LTO"),
        ] {
            let opts = GpuOptions {
                arch: (!arch.is_empty())
                    .then(|| w("-arch", arch))
                    .into_iter()
                    .collect(),
                gencode: (!gencode.is_empty())
                    .then(|| w("-gencode", gencode))
                    .into_iter()
                    .collect(),
                ..GpuOptions::default()
            };
            let err = names(opts).unwrap_err();
            assert!(err.contains(says), "{arch} {gencode}: {err}");
            let flag = if arch.is_empty() { "-gencode" } else { "-arch" };
            assert!(err.starts_with(flag), "{err}");
        }
    }

    #[test]
    fn native_asks_the_machine() {
        let opts = GpuOptions {
            arch: vec![w("-arch", "native")],
            ..GpuOptions::default()
        };
        let two = Gpu(Ok(vec!["sm_90".into(), "sm_80".into(), "sm_90".into()]));
        assert_eq!(opts.sm_names(&two).unwrap(), vec!["sm_90", "sm_80"]);
        let none = Gpu(Err("no NVIDIA GPU".into()));
        let err = opts.sm_names(&none).unwrap_err().to_string();
        assert!(
            err.starts_with("-arch native: cannot tell this machine's GPU (no NVIDIA GPU)"),
            "{err}"
        );
    }
}
