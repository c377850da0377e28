//! Where `http` tools may send requests: the operator's allowlist of URL prefixes, and a
//! resolver that keeps hostnames off private, loopback and link-local addresses.
//!
//! A client chooses a tool's URL, so without this any client could make the service POST to
//! its own loopback, the cloud metadata address or the private network and read the reply.
//! Destinations are an operator decision (`--http-tool-allow PREFIX`); everything else is
//! refused when the tool is defined, and checked again before each call. A prefix naming an
//! IP address or `localhost` allows exactly that address; any other hostname may only resolve
//! to public addresses, checked at connect time so that DNS cannot be rebound in between.

use reqwest::Url;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// One allowed prefix, parsed: a URL is under it when scheme, host and port are the same and
/// its path starts with the prefix's path.
#[derive(Debug, Clone)]
struct AllowedPrefix {
    scheme: String,
    host: url::Host<String>,
    port: u16,
    path: String,
}

/// The allowlist; empty means no `http` tool may be defined.
#[derive(Debug, Clone, Default)]
pub struct EgressPolicy {
    prefixes: Vec<AllowedPrefix>,
}

/// Why a URL is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EgressError {
    #[error("{0:?} is not a valid http(s) URL")]
    Invalid(String),
    #[error("{0:?} is not under any URL prefix the operator allows for http tools (--http-tool-allow)")]
    NotAllowed(String),
}

impl EgressPolicy {
    /// Parses the operator's prefixes; each must be an absolute http(s) URL without
    /// credentials, query or fragment.
    pub fn new<S: AsRef<str>>(prefixes: impl IntoIterator<Item = S>) -> Result<Self, String> {
        let prefixes = prefixes
            .into_iter()
            .map(|raw| {
                let raw = raw.as_ref().trim();
                let url =
                    parse_http_url(raw).ok_or_else(|| format!("--http-tool-allow {raw:?}: not an http(s) URL"))?;
                if url.query().is_some() || url.fragment().is_some() {
                    return Err(format!("--http-tool-allow {raw:?}: a prefix has no query or fragment"));
                }
                Ok(AllowedPrefix {
                    scheme: url.scheme().to_owned(),
                    host: url.host().expect("checked by parse_http_url").to_owned(),
                    port: url.port_or_known_default().expect("http(s) has a default port"),
                    path: url.path().to_owned(),
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Self { prefixes })
    }

    /// Whether any destination is allowed at all.
    pub fn is_open(&self) -> bool {
        !self.prefixes.is_empty()
    }

    /// The URL, parsed, if it is under an allowed prefix.
    pub fn check(&self, raw: &str) -> Result<Url, EgressError> {
        let url = parse_http_url(raw).ok_or_else(|| EgressError::Invalid(raw.to_owned()))?;
        // A path that a server may decode into another one (`%2F..%2F`, a backslash) could
        // leave the prefix it matched: refused.
        let path = url.path().to_ascii_lowercase();
        if ["%2f", "%5c", "%2e", "\\"].iter().any(|sneaky| path.contains(sneaky)) {
            return Err(EgressError::Invalid(raw.to_owned()));
        }
        let host = url.host().expect("checked by parse_http_url").to_owned();
        let port = url.port_or_known_default();
        let allowed = self.prefixes.iter().any(|prefix| {
            prefix.scheme == url.scheme()
                && prefix.host == host
                && Some(prefix.port) == port
                && path_under(url.path(), &prefix.path)
        });
        if allowed { Ok(url) } else { Err(EgressError::NotAllowed(raw.to_owned())) }
    }
}

/// An absolute http(s) URL with a host and no credentials.
fn parse_http_url(raw: &str) -> Option<Url> {
    let url = Url::parse(raw).ok()?;
    let ok = matches!(url.scheme(), "http" | "https")
        && url.host().is_some()
        && url.username().is_empty()
        && url.password().is_none();
    ok.then_some(url)
}

/// `/api/v1/x` is under `/api/` and `/api`, not under `/ap` (a prefix ends at a segment).
fn path_under(path: &str, prefix: &str) -> bool {
    match path.strip_prefix(prefix) {
        Some(rest) => prefix.ends_with('/') || rest.is_empty() || rest.starts_with('/'),
        None => false,
    }
}

/// Whether an address is on the public internet: not loopback, private, link-local,
/// shared, multicast, documentation or otherwise reserved (IPv4 inside IPv6 is unwrapped).
pub(crate) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (carrier NAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240) // reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let segments = ip.segments();
    let embedded_v4 = |high: u16, low: u16| Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    match segments {
        // NAT64 and 6to4 carry an IPv4 address: judge that one.
        [0x64, 0xff9b, 0, 0, 0, 0, high, low] => is_public_v4(embedded_v4(high, low)),
        // Local-use NAT64 and IPv4-translated addresses reach networks of their own.
        [0x64, 0xff9b, 1, ..] | [0, 0, 0, 0, 0xffff, 0, _, _] => false,
        [0x2002, high, low, ..] => is_public_v4(embedded_v4(high, low)),
        _ => {
            !(ip.is_unspecified()
                || ip.is_loopback()
                || ip.is_multicast()
                || (segments[0] & 0xfe00) == 0xfc00 // unique local
                || (segments[0] & 0xffc0) == 0xfe80 // link-local
                || (segments[0] == 0x2001 && segments[1] == 0x0db8) // documentation
                || segments[..6] == [0, 0, 0, 0, 0, 0]) // IPv4-compatible (deprecated)
        }
    }
}

/// Resolves hostnames for the `http` executor: `localhost` to loopback (a prefix naming it
/// is the operator's explicit permission), every other name to its public addresses only.
#[derive(Debug, Clone, Default)]
pub(crate) struct PublicResolver;

impl Resolve for PublicResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            if host.eq_ignore_ascii_case("localhost") {
                let loopback: Addrs = Box::new(
                    [IpAddr::V4(Ipv4Addr::LOCALHOST), IpAddr::V6(Ipv6Addr::LOCALHOST)]
                        .into_iter()
                        .map(|ip| SocketAddr::new(ip, 0)),
                );
                return Ok(loopback);
            }
            let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
            let addrs: Addrs = Box::new(public_only(&host, found)?.into_iter());
            Ok(addrs)
        })
    }
}

/// The public addresses among those `host` resolved to; an error when there are none.
fn public_only(host: &str, found: impl IntoIterator<Item = SocketAddr>) -> Result<Vec<SocketAddr>, String> {
    let public: Vec<SocketAddr> = found.into_iter().filter(|addr| is_public(addr.ip())).collect();
    if public.is_empty() {
        return Err(format!("{host} resolves to no public address (a private one needs an IP address prefix)"));
    }
    Ok(public)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(prefixes: &[&str]) -> EgressPolicy {
        EgressPolicy::new(prefixes).unwrap()
    }

    /// Item 2 of the security review: only URLs under an operator's prefix are reachable.
    #[test]
    fn item02_urls_must_be_under_an_allowed_prefix() {
        let open = policy(&["https://api.example.com/tools/", "http://127.0.0.1:9000/"]);
        assert!(open.check("https://api.example.com/tools/lookup?q=1").is_ok());
        assert!(open.check("https://api.example.com:443/tools/x").is_ok());
        assert!(open.check("http://127.0.0.1:9000/anything").is_ok());
        for refused in [
            "https://api.example.com/admin",
            "http://api.example.com/tools/x",
            "https://api.example.com:8443/tools/x",
            "https://api.example.com.evil.net/tools/x",
            "https://api.example.com@169.254.169.254/tools/x",
            "https://user:pw@api.example.com/tools/x",
            "http://127.0.0.1:9001/",
            "http://2130706433:9001/",
            "http://[::1]:9000/",
            "http://localhost:9000/",
            "file:///etc/passwd",
            "not a url",
        ] {
            assert!(open.check(refused).is_err(), "{refused} must be refused");
        }
        // The decimal form of an allowed address is that address.
        assert!(policy(&["http://127.0.0.1:9000/"]).check("http://2130706433:9000/x").is_ok());
        assert!(EgressPolicy::default().check("https://api.example.com/").is_err(), "nothing is allowed by default");
        assert!(!EgressPolicy::default().is_open());
    }

    #[test]
    fn prefixes_end_at_a_path_segment() {
        let open = policy(&["https://h.example/api"]);
        assert!(open.check("https://h.example/api").is_ok());
        assert!(open.check("https://h.example/api/x").is_ok());
        assert!(open.check("https://h.example/apix").is_err());
        for sneaky in [
            "https://h.example/api/%2F..%2Fadmin",
            "https://h.example/api/%2e%2e/admin",
            "https://h.example/api/..\\admin",
        ] {
            assert!(open.check(sneaky).is_err(), "{sneaky}");
        }
        assert!(open.check("https://h.example/api/../admin").is_err(), "dot segments are resolved first");
        assert!(EgressPolicy::new(["https://h.example/?q=1"]).is_err());
        assert!(EgressPolicy::new(["ftp://h.example/"]).is_err());
    }

    #[test]
    fn only_public_addresses_are_public() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fc00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "::127.0.0.1",
            "64:ff9b:1::a00:1",
            "::ffff:0:a00:1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private} is not public");
        }
        for public in ["8.8.8.8", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8"] {
            assert!(is_public(public.parse().unwrap()), "{public} is public");
        }
    }

    #[tokio::test]
    async fn hostnames_resolve_to_public_addresses_only_and_localhost_to_loopback() {
        let localhost: Vec<SocketAddr> = PublicResolver.resolve("localhost".parse().unwrap()).await.unwrap().collect();
        assert!(!localhost.is_empty() && localhost.iter().all(|a| a.ip().is_loopback()));
        let addr = |s: &str| SocketAddr::new(s.parse().unwrap(), 0);
        let rebound = [addr("10.0.0.7"), addr("93.184.215.14"), addr("::1")];
        assert_eq!(public_only("h", rebound).unwrap(), vec![addr("93.184.215.14")]);
        assert!(public_only("h", [addr("169.254.169.254")]).unwrap_err().contains("no public address"));
    }
}
