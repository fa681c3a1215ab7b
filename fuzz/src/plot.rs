//! An SVG of a campaign: host edges, device edges and unique crashes over time, each
//! scaled to its own maximum (the legend gives the maxima).

use std::fmt::Write;

use crate::stats::Snapshot;

const W: f64 = 800.0;
const H: f64 = 400.0;
const PAD: f64 = 50.0;

/// One plotted quantity of a snapshot.
type Series = fn(&Snapshot) -> f64;

fn series(rows: &[Snapshot], t_max: f64, f: impl Fn(&Snapshot) -> f64) -> (String, f64) {
    let max = rows.iter().map(&f).fold(0.0, f64::max).max(1.0);
    let pts: Vec<String> = rows
        .iter()
        .map(|r| {
            let x = PAD + (W - 2.0 * PAD) * r.elapsed_s / t_max;
            let y = H - PAD - (H - 2.0 * PAD) * f(r) / max;
            format!("{x:.1},{y:.1}")
        })
        .collect();
    (pts.join(" "), max)
}

/// The SVG document for `rows` (the history of one campaign).
pub fn svg(rows: &[Snapshot], title: &str) -> String {
    let t_max = rows
        .iter()
        .map(|r| r.elapsed_s)
        .fold(0.0, f64::max)
        .max(1.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{PAD}" y="20" font-size="14">{}</text>"#,
        title.replace('&', "&amp;").replace('<', "&lt;")
    );
    let _ = writeln!(
        s,
        r#"<line x1="{PAD}" y1="{y}" x2="{x}" y2="{y}" stroke="black"/><line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{y}" stroke="black"/>"#,
        x = W - PAD,
        y = H - PAD
    );
    let _ = writeln!(
        s,
        r#"<text x="{x}" y="{y}" text-anchor="end">time (s), 0 .. {t_max:.0}</text>"#,
        x = W - PAD,
        y = H - PAD + 30.0
    );
    let lines: [(&str, &str, Series); 3] = [
        ("host edges", "#1f77b4", |r| r.host_edges as f64),
        ("device edges", "#2ca02c", |r| r.device_edges as f64),
        ("unique crashes", "#d62728", |r| r.unique_crashes as f64),
    ];
    for (i, (name, color, f)) in lines.iter().enumerate() {
        let (pts, max) = series(rows, t_max, f);
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{pts}"/>"#
        );
        let _ = writeln!(
            s,
            r#"<text x="{x}" y="{y}" fill="{color}">{name} (max {max:.0})</text>"#,
            x = PAD + 10.0 + 200.0 * i as f64,
            y = PAD - 10.0
        );
    }
    s.push_str("</svg>\n");
    s
}
