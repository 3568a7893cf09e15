//! Chunked uploads at `/mgmt/shared/file-transfer/uploads/<name>` (also `ucs-uploads`) and
//! `/mgmt/tm/asm/file-transfer/uploads/<name>`: `Content-Range: first-last/total` (last
//! inclusive), bytes written at their offset under `<data-dir>/downloads/<name>` and synced
//! before the answer, which is the whole upload state. Names with `/` or `..` and files
//! over the size limit are refused.

use std::io::{Seek, SeekFrom, Write as _};

use http::Method;
use serde_json::json;

use super::sys_file::DOWNLOADS;
use portcullis_admin::Ctx;
use portcullis_admin::Reply;
use portcullis_admin::check_name;
use portcullis_admin::{MgmtError, MgmtResult};
use portcullis_store::Table;
use portcullis_support::now_micros;

/// Parses `first-last/total` (also with a leading `bytes `).
pub fn parse_content_range(v: &str) -> Option<(u64, u64, u64)> {
    let v = v
        .trim()
        .strip_prefix("bytes")
        .map(str::trim_start)
        .unwrap_or(v.trim());
    let (range, total) = v.split_once('/')?;
    let (a, b) = range.split_once('-')?;
    let (a, b, t): (u64, u64, u64) = (
        a.trim().parse().ok()?,
        b.trim().parse().ok()?,
        total.trim().parse().ok()?,
    );
    (a <= b && b < t).then_some((a, b, t))
}

pub fn handle(ctx: &Ctx<'_>, body: &[u8]) -> MgmtResult<Reply> {
    let prefix = [
        "/mgmt/shared/file-transfer/uploads",
        "/mgmt/shared/file-transfer/ucs-uploads",
        "/mgmt/tm/asm/file-transfer/uploads",
    ]
    .into_iter()
    .find(|p| ctx.path.starts_with(p))
    .unwrap_or_default();
    let name = ctx.path[prefix.len()..].trim_start_matches('/');
    if ctx.method != Method::POST {
        return Err(MgmtError::method_not_allowed(
            ctx.method.as_str(),
            &ctx.path,
        ));
    }
    if name.is_empty() || name.contains('/') {
        return Err(MgmtError::bad_request(format!(
            "Invalid upload file name '{name}': a single file name is required."
        )));
    }
    check_name(name)
        .map_err(|_| MgmtError::bad_request(format!("Invalid upload file name '{name}'.")))?;
    let n = body.len() as u64;
    let (first, last, total) = match ctx.headers.get(http::header::CONTENT_RANGE) {
        Some(v) => v
            .to_str()
            .ok()
            .and_then(parse_content_range)
            .ok_or_else(|| {
                MgmtError::bad_request(
                    "Content-Range must be <first>-<last>/<total> with first <= last < total.",
                )
            })?,
        None if n > 0 => (0, n - 1, n),
        None => {
            return Err(MgmtError::bad_request(
                "An upload needs a body and a Content-Range header.",
            ));
        }
    };
    let limit = ctx.st.cfg.max_upload_bytes;
    if total > limit {
        return Err(MgmtError::new(
            http::StatusCode::PAYLOAD_TOO_LARGE,
            format!("The file of {total} bytes exceeds the upload limit of {limit} bytes."),
        ));
    }
    if last - first + 1 != n {
        return Err(MgmtError::bad_request(format!(
            "Content-Range {first}-{last}/{total} announces {} bytes but the body has {n}.",
            last - first + 1
        )));
    }
    let dir = ctx.st.downloads_dir();
    let io = |e: std::io::Error| MgmtError::internal(format!("upload {name}: {e}"));
    std::fs::create_dir_all(&dir).map_err(io)?;
    let path = dir.join(name);
    let current = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    if first > current {
        return Err(MgmtError::bad_request(format!(
            "Chunk starts at {first} but only {current} bytes of {name} were received."
        )));
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(first == 0)
        .open(&path)
        .map_err(io)?;
    f.seek(SeekFrom::Start(first)).map_err(io)?;
    f.write_all(body).map_err(io)?;
    f.set_len(last + 1).map_err(io)?;
    f.sync_all().map_err(io)?;
    let now = now_micros();
    let state = ctx.st.store.write(|tx| {
        let prev = tx.get(Table::Files, name)?;
        let mut chunks = match prev {
            Some(p) if first > 0 && p["totalByteCount"].as_u64() == Some(total) => {
                p["usedChunks"].clone()
            }
            _ => json!({}),
        };
        chunks[first.to_string()] = json!(n);
        let state = json!({
            "remainingByteCount": total - (last + 1),
            "usedChunks": chunks,
            "totalByteCount": total,
            "localFilePath": format!("{DOWNLOADS}{name}"),
            "temporaryFilePath": format!("{DOWNLOADS}tmp/{name}"),
            "generation": 0,
            "lastUpdateMicros": now,
        });
        tx.put(Table::Files, name, &state)?;
        Ok::<_, MgmtError>(state)
    })?;
    Ok(Reply::json(state))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_ranges() {
        assert_eq!(parse_content_range("0-936/937"), Some((0, 936, 937)));
        assert_eq!(
            parse_content_range("bytes 1048576-1052671/1052672"),
            Some((1_048_576, 1_052_671, 1_052_672))
        );
        assert_eq!(parse_content_range("5-4/10"), None);
        assert_eq!(parse_content_range("0-10/10"), None);
        assert_eq!(parse_content_range("x-1/2"), None);
    }
}
