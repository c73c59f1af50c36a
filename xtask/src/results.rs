//! The bench's results: the guest's `result <scheduler> <metric> <value>` lines, one per
//! repetition, and the Markdown table of medians (min–max) with each scheduler's ratio to
//! EEVDF's median, ejections counted rather than averaged.

use std::collections::BTreeMap;

/// Every value of every metric: metric -> scheduler -> one value per repetition.
pub type Results = BTreeMap<String, BTreeMap<String, Vec<f64>>>;

/// `result <scheduler> <metric> <value>` lines from the guest (repeated once per repetition).
pub fn parse_results(output: &str) -> Results {
    let mut table: Results = BTreeMap::new();
    for line in output.lines() {
        let mut f = line.split_whitespace();
        if f.next() != Some("result") {
            continue;
        }
        if let (Some(sched), Some(metric), Some(Ok(value))) =
            (f.next(), f.next(), f.next().map(str::parse::<f64>))
        {
            table
                .entry(metric.to_owned())
                .or_default()
                .entry(sched.to_owned())
                .or_default()
                .push(value);
        }
    }
    table
}

/// The schedulers of `names` with no result at all: they never attached (or were ejected in
/// every repetition), and their columns would be empty.
pub fn without_results(results: &Results, names: &[String]) -> Vec<String> {
    names
        .iter()
        .filter(|name| {
            !results
                .values()
                .any(|by_sched| by_sched.contains_key(*name))
        })
        .cloned()
        .collect()
}

/// The median of `values` (the mean of the middle two for an even count); None when empty.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// One cell: the median, and the range when there were several repetitions.
fn cell(values: &[f64]) -> String {
    let Some(mid) = median(values) else {
        return "–".into();
    };
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if values.len() > 1 && lo < hi {
        format!("{mid:.2} ({lo:.2}–{hi:.2})")
    } else {
        format!("{mid:.2}")
    }
}

/// A markdown table: one row per metric, a column per scheduler (median, min–max), and each
/// one's ratio of medians to EEVDF.
pub fn render_table(table: &Results, schedulers: &[String]) -> String {
    let mut out = String::from("| metric |");
    for s in schedulers {
        out.push_str(&format!(" {s} |"));
    }
    for s in schedulers.iter().filter(|s| *s != "eevdf") {
        out.push_str(&format!(" {s} / eevdf |"));
    }
    out.push_str("\n|---|");
    let ratio_cols = schedulers.iter().filter(|s| *s != "eevdf").count();
    out.push_str(&"---:|".repeat(schedulers.len() + ratio_cols));
    out.push('\n');
    for (metric, values) in table {
        out.push_str(&format!("| {metric} |"));
        if is_ejection(metric) {
            out.push_str(&ejection_row(values, schedulers, ratio_cols));
            continue;
        }
        for s in schedulers {
            let v = values.get(s).map(Vec::as_slice).unwrap_or_default();
            out.push_str(&format!(" {} |", cell(v)));
        }
        let base = values.get("eevdf").and_then(|v| median(v));
        for s in schedulers.iter().filter(|s| *s != "eevdf") {
            match (values.get(s).and_then(|v| median(v)), base) {
                (Some(v), Some(base)) if base > 0.0 => {
                    out.push_str(&format!(" {:.2}× |", v / base))
                }
                _ => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    out
}

/// A row that counts ejections (`ejected`, `<load>_ejected`) rather than measuring: each one
/// is a repetition whose rows of that scheduler (under that load) were left out.
fn is_ejection(metric: &str) -> bool {
    metric == "ejected" || metric.ends_with("_ejected")
}

/// The cells of an ejection row: in how many repetitions each scheduler was ejected (a median
/// of ones would hide it), and no ratios.
fn ejection_row(
    values: &BTreeMap<String, Vec<f64>>,
    schedulers: &[String],
    ratio_cols: usize,
) -> String {
    let mut row = String::new();
    for s in schedulers {
        match values.get(s).map(Vec::len) {
            Some(n) if n > 0 => row.push_str(&format!(" ejected in {n} |")),
            _ => row.push_str(" – |"),
        }
    }
    row.push_str(&" – |".repeat(ratio_cols));
    row.push('\n');
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_become_ratios_of_medians_against_eevdf() {
        let out = "noise\nresult eevdf hackbench_s 2.0\nresult gearshift hackbench_s 1.5\n\
                   result eevdf uname_p50_us 1000\nresult gearshift uname_p50_us 250\nresult gearshift bogus x\n";
        let table = parse_results(out);
        assert_eq!(table["hackbench_s"]["gearshift"], vec![1.5]);
        assert!(!table.contains_key("bogus"));
        let text = render_table(&table, &["eevdf".into(), "gearshift".into()]);
        assert!(
            text.contains("| hackbench_s | 2.00 | 1.50 | 0.75× |"),
            "{text}"
        );
        assert!(
            text.contains("| uname_p50_us | 1000.00 | 250.00 | 0.25× |"),
            "{text}"
        );
    }

    #[test]
    fn ejections_are_counted_per_load_not_averaged() {
        let out = "result eevdf hogs_miss_pct 10\nresult peer mixed_ejected 1\n\
                   result gs hogs_miss_pct 5\nresult peer mixed_ejected 1\nresult peer ejected 1\n";
        let table = parse_results(out);
        let text = render_table(&table, &["eevdf".into(), "gs".into(), "peer".into()]);
        assert!(
            text.contains("| mixed_ejected | – | – | ejected in 2 | – | – |"),
            "{text}"
        );
        assert!(
            text.contains("| ejected | – | – | ejected in 1 | – | – |"),
            "{text}"
        );
        assert!(text.contains("| hogs_miss_pct | 10.00 | 5.00 | – | 0.50× | – |"));
    }

    #[test]
    fn repetitions_show_median_and_range() {
        let out = "result eevdf m 10\nresult eevdf m 30\nresult eevdf m 20\n\
                   result gs m 4\nresult gs m 6\nresult peer m 7\n";
        let table = parse_results(out);
        let text = render_table(&table, &["eevdf".into(), "gs".into(), "peer".into()]);
        // Medians 20 and 5 (mean of the middle two); a single value has no range.
        assert!(
            text.contains("| m | 20.00 (10.00–30.00) | 5.00 (4.00–6.00) | 7.00 | 0.25× | 0.35× |"),
            "{text}"
        );
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn a_scheduler_without_a_single_result_is_named() {
        let results = parse_results("result eevdf hackbench_s 7.5\nresult gearshift x 1\n");
        let names = ["eevdf", "gearshift", "scx_cosmos"].map(String::from);
        assert_eq!(without_results(&results, &names), ["scx_cosmos"]);
    }
}
