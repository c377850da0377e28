//! Exported bundles: a container's chain as a header line and one record per line.

use super::Record;

/// First line of an exported bundle.
pub(crate) const BUNDLE_FORMAT: &str = "sluice-audit-bundle/1";

/// An exported container history: a header line, then one record per line.
pub fn write_bundle(container_id: &str, records: &[Record], out: &mut impl std::io::Write) -> std::io::Result<()> {
    let header = serde_json::json!({
        "format": BUNDLE_FORMAT,
        "container_id": container_id,
        "records": records.len(),
        "exported_at": humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
    });
    writeln!(out, "{header}")?;
    for record in records {
        writeln!(out, "{}", serde_json::to_string(record).expect("records serialize"))?;
    }
    Ok(())
}

/// Reads a bundle written by [`write_bundle`].
pub fn read_bundle(text: &str) -> Result<(String, Vec<Record>), String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: serde_json::Value =
        serde_json::from_str(lines.next().ok_or("the bundle is empty")?).map_err(|e| format!("bundle header: {e}"))?;
    if header["format"] != BUNDLE_FORMAT {
        return Err(format!("not a {BUNDLE_FORMAT} bundle"));
    }
    let container_id = header["container_id"].as_str().ok_or("bundle header lacks container_id")?.to_owned();
    let records = lines
        .enumerate()
        .map(|(i, line)| serde_json::from_str(line).map_err(|e| format!("bundle line {}: {e}", i + 2)))
        .collect::<Result<Vec<Record>, _>>()?;
    Ok((container_id, records))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::chain::tests::{chain, events};

    #[test]
    fn bundles_round_trip() {
        let records = chain(&events());
        let mut bundle = Vec::new();
        write_bundle("c", &records, &mut bundle).unwrap();
        let (id, read) = read_bundle(std::str::from_utf8(&bundle).unwrap()).unwrap();
        assert_eq!((id.as_str(), read), ("c", records));
        assert!(read_bundle("{\"format\": \"other\"}").is_err());
    }
}
