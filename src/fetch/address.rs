//! The address policy: which IP addresses freshet may connect to (pure, plus the DNS resolver
//! that applies it).
//!
//! By default every special-purpose range is refused: loopback (127.0.0.0/8, ::1), private
//! (RFC 1918: 10/8, 172.16/12, 192.168/16; and the shared 100.64/10 of carrier NAT), link-local
//! (169.254/16, where cloud metadata services live, and fe80::/10), unique-local (fc00::/7) and
//! the old site-local fec0::/10, multicast (224/4, ff00::/8), unspecified and "this network"
//! (0.0.0.0/8, ::) and broadcast. An IPv6 address that carries an IPv4 address a router on the
//! way connects to (IPv4-mapped `::ffff:10.0.0.1`, IPv4-compatible `::10.0.0.1`, NAT64
//! `64:ff9b::a00:1`, 6to4 `2002:a00:1::`, Teredo and ISATAP) is judged as that IPv4 address,
//! and NAT64's local-use prefix `64:ff9b:1::/48` is private. A site opts in to ranges with
//! `allow_networks` (CIDR blocks).
//!
//! The policy is checked *after* name resolution, by [`PolicyResolver`], the HTTP client's DNS
//! resolver: whatever a name resolves to (DNS, or a `FetchConfig::resolve` override), only
//! allowed addresses are handed to the connector, so a name that points at 127.0.0.1 or that
//! changes its answer between two lookups cannot get through. URLs with a literal IP never reach
//! a resolver; the hop loop checks those itself ([`AddressPolicy::check_host`]).
//!
//! Not here: which URLs a site may fetch (robots.txt, the cross-host rule).

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;

use url::Host;

/// A CIDR block such as `10.0.0.0/8` or `::1/128`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    /// The network address (host bits zero).
    network: IpAddr,
    /// Prefix length: up to 32 for IPv4, 128 for IPv6.
    prefix: u8,
}

impl Cidr {
    /// Whether `ip` is inside the block (an IPv4 block never holds an IPv6 address; compare
    /// the mapped form with [`canonical`] first).
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.network, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                mask_v4(u32::from(ip), self.prefix) == u32::from(net)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                mask_v6(u128::from(ip), self.prefix) == u128::from(net)
            }
            _ => false,
        }
    }
}

fn mask_v4(bits: u32, prefix: u8) -> u32 {
    if prefix == 0 {
        0
    } else {
        bits & (u32::MAX << (32 - u32::from(prefix)))
    }
}

fn mask_v6(bits: u128, prefix: u8) -> u128 {
    if prefix == 0 {
        0
    } else {
        bits & (u128::MAX << (128 - u32::from(prefix)))
    }
}

impl FromStr for Cidr {
    type Err = String;

    /// `address/prefix`; a bare address is a block of one. Host bits must be zero, so that a
    /// typo (`10.0.0.1/8` for `10.0.0.0/8`) is caught rather than silently widened.
    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let ip: IpAddr = address.parse().map_err(|_| {
            format!("`{text}` is not a CIDR block: `{address}` is not an IP address")
        })?;
        let max = if ip.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p.parse::<u8>().ok().filter(|&p| p <= max).ok_or_else(|| {
                format!("`{text}` is not a CIDR block: the prefix must be 0 to {max}")
            })?,
        };
        let masked = match ip {
            IpAddr::V4(v4) => IpAddr::V4(Ipv4Addr::from(mask_v4(u32::from(v4), prefix))),
            IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(mask_v6(u128::from(v6), prefix))),
        };
        if masked != ip {
            return Err(format!(
                "`{text}` has bits set after the prefix: did you mean {masked}/{prefix}?"
            ));
        }
        Ok(Cidr {
            network: ip,
            prefix,
        })
    }
}

impl fmt::Display for Cidr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.network, self.prefix)
    }
}

/// `ip`, with an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) turned into its IPv4 address.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// The special-purpose range `ip` falls in (refused by default), or `None` for a public address.
pub fn special_range(ip: IpAddr) -> Option<&'static str> {
    match canonical(ip) {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            if v4.is_loopback() {
                Some("loopback")
            } else if v4.is_private() || (a == 100 && (64..128).contains(&b)) {
                Some("private")
            } else if v4.is_link_local() {
                Some("link-local")
            } else if v4.is_multicast() {
                Some("multicast")
            } else if a == 0 {
                Some("unspecified")
            } else if v4.is_broadcast() {
                Some("broadcast")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            if v6.is_loopback() {
                Some("loopback")
            } else if v6.is_unspecified() {
                Some("unspecified")
            } else if let Some(range) = embedded_ipv4(v6).and_then(|v4| special_range(v4.into())) {
                Some(range)
            } else if v6.segments()[..3] == [0x64, 0xff9b, 1] {
                Some("private") // NAT64's local-use prefix 64:ff9b:1::/48 (RFC 8215)
            } else if first & 0xffc0 == 0xfe80 || first & 0xffc0 == 0xfec0 {
                Some("link-local")
            } else if first & 0xfe00 == 0xfc00 {
                Some("unique-local")
            } else if v6.is_multicast() {
                Some("multicast")
            } else {
                None
            }
        }
    }
}

/// The IPv4 address an IPv6 address carries to reach, where a router on the way turns it into
/// that IPv4 address: IPv4-compatible `::a.b.c.d` (deprecated, still routed by some stacks),
/// IPv4-translated `::ffff:0:a.b.c.d` (SIIT),
/// NAT64's well-known prefix `64:ff9b::a.b.c.d` (RFC 6052), 6to4's `2002:aabb:ccdd::/48`
/// (RFC 3056), Teredo's `2001:0::/32`, whose last 32 bits are the client's IPv4 address with
/// every bit flipped (RFC 4380: the relay sends there), and ISATAP's interface identifier
/// `0:5efe:a.b.c.d` (or `200:5efe:`, under any prefix: RFC 5214, the tunnel's IPv4 end).
/// `64:ff9b::a9fe:a9fe` reaches 169.254.169.254 through a NAT64 gateway, so it is judged as
/// that address.
fn embedded_ipv4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    // The IPv4 address spelt by two 16-bit segments.
    let ipv4 = |high: u16, low: u16| Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
    let ipv4_prefixes = [
        [0, 0, 0, 0, 0, 0],         // IPv4-compatible
        [0, 0, 0, 0, 0xffff, 0],    // IPv4-translated (RFC 2765)
        [0x64, 0xff9b, 0, 0, 0, 0], // NAT64 well-known prefix
    ];
    if ipv4_prefixes.contains(&[s[0], s[1], s[2], s[3], s[4], s[5]]) {
        Some(ipv4(s[6], s[7]))
    } else if s[0] == 0x2001 && s[1] == 0 {
        Some(ipv4(!s[6], !s[7]))
    } else if s[4] & !0x0300 == 0 && s[5] == 0x5efe {
        Some(ipv4(s[6], s[7]))
    } else if s[0] == 0x2002 {
        Some(ipv4(s[1], s[2]))
    } else {
        None
    }
}

/// A refused address: which one, for which host, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("address {address} of {host} is {range} and not in allow_networks")]
pub struct Refused {
    /// The host name (or literal address) of the URL.
    pub host: String,
    /// The address it resolved to.
    pub address: IpAddr,
    /// The range's name (`loopback`, `private`, ...).
    pub range: &'static str,
}

/// Which addresses one site may connect to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressPolicy {
    /// Ranges opted in to (`allow_networks`); empty: only public addresses.
    pub allow: Vec<Cidr>,
}

impl AddressPolicy {
    /// A policy allowing the special ranges in `allow` too.
    pub fn allowing(allow: &[Cidr]) -> Self {
        Self {
            allow: allow.to_vec(),
        }
    }

    /// Whether `address` (reached through `host`) may be connected to.
    pub fn check(&self, host: &str, address: IpAddr) -> Result<(), Refused> {
        let Some(range) = special_range(address) else {
            return Ok(());
        };
        let plain = canonical(address);
        let carried = match address {
            IpAddr::V6(v6) => embedded_ipv4(v6).map(IpAddr::V4),
            IpAddr::V4(_) => None,
        };
        if self.allow.iter().any(|cidr| {
            cidr.contains(address)
                || cidr.contains(plain)
                || carried.is_some_and(|v4| cidr.contains(v4))
        }) {
            return Ok(());
        }
        Err(Refused {
            host: host.to_string(),
            address,
            range,
        })
    }

    /// Checks a URL's host when it is a literal address (names are checked by the resolver).
    pub fn check_host(&self, host: Option<Host<&str>>) -> Result<(), Refused> {
        match host {
            Some(Host::Ipv4(v4)) => self.check(&v4.to_string(), IpAddr::V4(v4)),
            Some(Host::Ipv6(v6)) => self.check(&format!("[{v6}]"), IpAddr::V6(v6)),
            _ => Ok(()),
        }
    }
}

/// The HTTP client's DNS resolver: the `FetchConfig::resolve` overrides, else the system's
/// resolver, then only the addresses the [`AddressPolicy`] allows. When every address is refused
/// the lookup fails with [`Refused`], which the hop loop turns into a recorded error.
pub(super) struct PolicyResolver {
    /// Host names (lower case) mapped to fixed addresses.
    pub overrides: HashMap<String, Vec<SocketAddr>>,
    /// The site's policy.
    pub policy: AddressPolicy,
}

impl reqwest::dns::Resolve for PolicyResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_ascii_lowercase();
        let fixed = self.overrides.get(&host).cloned();
        let policy = self.policy.clone();
        Box::pin(async move {
            let found: Vec<SocketAddr> = match fixed {
                Some(addrs) => addrs,
                None => tokio::net::lookup_host((host.as_str(), 0)).await?.collect(),
            };
            let mut refused = None;
            let allowed: Vec<SocketAddr> = found
                .into_iter()
                .filter(|addr| match policy.check(&host, addr.ip()) {
                    Ok(()) => true,
                    Err(why) => {
                        refused.get_or_insert(why);
                        false
                    }
                })
                .collect();
            match (allowed.is_empty(), refused) {
                (true, Some(why)) => Err(Box::new(why) as Box<dyn std::error::Error + Send + Sync>),
                _ => Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs),
            }
        })
    }
}

/// The resolver for a client, shared by its connections.
pub(super) fn resolver(resolve: &[(String, SocketAddr)], allow: &[Cidr]) -> Arc<PolicyResolver> {
    let mut overrides: HashMap<String, Vec<SocketAddr>> = HashMap::new();
    for (host, addr) in resolve {
        overrides
            .entry(host.to_ascii_lowercase())
            .or_default()
            .push(*addr);
    }
    Arc::new(PolicyResolver {
        overrides,
        policy: AddressPolicy::allowing(allow),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn special_ranges_are_refused_by_default() {
        let policy = AddressPolicy::default();
        for (address, range) in [
            ("127.0.0.1", "loopback"),
            ("127.8.9.10", "loopback"),
            ("::1", "loopback"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("100.64.0.1", "private"),
            ("169.254.169.254", "link-local"),
            ("fe80::1", "link-local"),
            ("fc00::1", "unique-local"),
            ("fd12:3456::1", "unique-local"),
            ("224.0.0.1", "multicast"),
            ("ff02::1", "multicast"),
            ("0.0.0.0", "unspecified"),
            ("::", "unspecified"),
            ("255.255.255.255", "broadcast"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:10.0.0.1", "private"),
            ("::ffff:169.254.169.254", "link-local"),
            // IPv6 forms a router turns into the IPv4 address they carry.
            ("::a00:1", "private"), // ::10.0.0.1
            ("64:ff9b::a9fe:a9fe", "link-local"),
            ("64:ff9b::7f00:1", "loopback"),
            ("2002:c0a8:101::1", "private"),
            ("2002:7f00:1::1", "loopback"),
            ("64:ff9b:1::1", "private"),
            ("::ffff:0:7f00:1", "loopback"),
            // Teredo: the client's address, every bit flipped (10.0.0.1, 127.0.0.1).
            ("2001:0:4136:e378:8000:63bf:f5ff:fffe", "private"),
            ("2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"),
            // ISATAP: the tunnel's IPv4 end in the interface identifier.
            ("2a00:1450:4001:1:0:5efe:a9fe:a9fe", "link-local"),
            ("2a00:1450:4001:1:200:5efe:c0a8:101", "private"),
        ] {
            let err = policy.check("h", ip(address)).unwrap_err();
            assert_eq!(err.range, range, "{address}");
            assert!(err.to_string().contains(address), "{err}");
        }
        for public in [
            "93.184.216.34",
            "172.32.0.1",
            "2606:4700::1111",
            "8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "2001:0:4136:e378:8000:63bf:f7f7:f7f7", // Teredo client 8.8.8.8
            "2a00:1450:4001:1:200:5efe:808:808",    // ISATAP over 8.8.8.8
            "2a00:1450:4001:1:5efe::1",             // not an ISATAP identifier
        ] {
            assert!(policy.check("h", ip(public)).is_ok(), "{public}");
        }
    }

    #[test]
    fn allow_networks_opens_exactly_the_named_ranges() {
        let allow: Vec<Cidr> = ["127.0.0.0/8", "::1/128", "10.0.0.0/8"]
            .iter()
            .map(|c| c.parse().unwrap())
            .collect();
        let policy = AddressPolicy::allowing(&allow);
        for ok in [
            "127.0.0.1",
            "127.0.0.2",
            "::1",
            "10.9.9.9",
            "::ffff:127.0.0.1",
            "64:ff9b::a00:1",
            "2002:a00:1::1",
            "2001:0:4136:e378:8000:63bf:f5ff:fffe",
            "2a00:1450:4001:1::5efe:a00:1",
        ] {
            assert!(policy.check("h", ip(ok)).is_ok(), "{ok}");
        }
        for refused in [
            "192.168.0.1",
            "169.254.169.254",
            "fc00::1",
            "172.16.0.1",
            "64:ff9b::c0a8:1",
        ] {
            assert!(policy.check("h", ip(refused)).is_err(), "{refused}");
        }
        let one: Cidr = "127.0.0.1/32".parse().unwrap();
        let policy = AddressPolicy::allowing(&[one]);
        assert!(policy.check("h", ip("127.0.0.1")).is_ok());
        assert!(policy.check("h", ip("127.0.0.2")).is_err());
    }

    #[test]
    fn cidr_parsing_names_the_problem() {
        assert_eq!(
            "10.0.0.0/8".parse::<Cidr>().unwrap().to_string(),
            "10.0.0.0/8"
        );
        assert_eq!("::1".parse::<Cidr>().unwrap().to_string(), "::1/128");
        assert!("0.0.0.0/0".parse::<Cidr>().unwrap().contains(ip("8.8.8.8")));
        let err = "10.0.0.1/8".parse::<Cidr>().unwrap_err();
        assert!(err.contains("10.0.0.0/8"), "{err}");
        assert!(
            "10.0.0.0/33"
                .parse::<Cidr>()
                .unwrap_err()
                .contains("0 to 32")
        );
        assert!(
            "intranet"
                .parse::<Cidr>()
                .unwrap_err()
                .contains("not an IP")
        );
        assert!("::/129".parse::<Cidr>().is_err());
    }

    #[test]
    fn literal_hosts_are_checked() {
        let policy = AddressPolicy::default();
        let url = url::Url::parse("http://[::ffff:7f00:1]:8080/x").unwrap();
        assert_eq!(policy.check_host(url.host()).unwrap_err().range, "loopback");
        let url = url::Url::parse("http://169.254.169.254/latest/meta-data/").unwrap();
        assert!(policy.check_host(url.host()).is_err());
        let url = url::Url::parse("http://example.com/").unwrap();
        assert!(policy.check_host(url.host()).is_ok());
    }
}
