//! `cusafe-fatbinary`: argument handling and errors (building real fatbinaries is in
//! `build.rs`).

use crate::common::{output, tool, write, TempDir};

const BIN: &str = env!("CARGO_BIN_EXE_cusafe-fatbinary");

#[test]
fn help_and_version() {
    let (code, stdout, _) = output(tool(BIN).arg("--help"));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("--image") && stdout.contains("--create") && stdout.contains("-64"),
        "{stdout}"
    );
    let (code, stdout, _) = output(tool(BIN).arg("--version"));
    assert_eq!(
        (code, stdout.trim_end()),
        (
            0,
            format!("cusafe-fatbinary {}", env!("CARGO_PKG_VERSION")).as_str()
        )
    );
}

#[test]
fn unknown_flags_are_named() {
    for bad in ["--bogus", "-cuda", "--image3=kind=elf,sm=90,file=x"] {
        let (code, _, stderr) =
            output(tool(BIN).args(["-64", "--create", "o", bad, "--image=profile=sm_90,file=a"]));
        assert_eq!(code, 2, "{bad}");
        let name = bad.split('=').next().unwrap();
        assert!(
            stderr.contains(&format!("unknown flag '{name}")),
            "{bad}: {stderr}"
        );
    }
}

#[test]
fn usage_errors() {
    let (code, _, stderr) = output(tool(BIN).args(["-64", "--image=profile=sm_90,file=a"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("--create"), "{stderr}");
    let (code, _, stderr) = output(tool(BIN).args(["-64", "--create", "o"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("--image"), "{stderr}");
    let (code, _, stderr) =
        output(tool(BIN).args(["--create", "o", "--image=profile=lto_90,file=a"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("unsupported profile 'lto_90'"), "{stderr}");
}

#[test]
fn input_and_library_errors() {
    let dir = TempDir::new("fatbin-errors");
    let out = dir.path().join("o.fatbin");
    let (code, _, stderr) = output(tool(BIN).args([
        "-64".as_ref(),
        "--create".as_ref(),
        out.as_os_str(),
        "--image=profile=sm_90,file=/nonexistent/k.cubin".as_ref(),
    ]));
    assert_eq!(code, 1);
    assert!(
        stderr.contains("cannot read /nonexistent/k.cubin"),
        "{stderr}"
    );

    let ptx = dir.path().join("k.s");
    write(&ptx, ".version 8.5\n.target sm_90\n.address_size 64\n");
    let image = format!("--image=profile=compute_90,file={}", ptx.display());
    let (code, _, stderr) = output(
        tool(BIN)
            .env("CUSAFE_NVFATBIN", "/nonexistent/libnvfatbin.so.12")
            .args([
                "-64".as_ref(),
                "--create".as_ref(),
                out.as_os_str(),
                image.as_ref(),
            ]),
    );
    assert_eq!(code, 1);
    assert!(
        stderr.contains("cannot load libnvfatbin")
            && stderr.contains("/nonexistent/libnvfatbin.so.12"),
        "{stderr}"
    );
    assert!(!out.exists());
}
