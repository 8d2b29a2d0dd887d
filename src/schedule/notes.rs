//! What a valid schedule may not mean as written, said as `file:line: key: sentence` lines for
//! `freshet check` and `freshet run`: several sites on one host with different `host_rate`s
//! (one politeness gate serves the host, at the slowest of their rates).

use std::collections::BTreeMap;

use super::Site;

/// One note per host that sites with different `host_rate`s share, at the first such site's
/// line: which sites, and the rate the host is actually given.
pub fn shared_host_notes(sites: &[Site]) -> Vec<String> {
    let mut by_host: BTreeMap<String, Vec<&Site>> = BTreeMap::new();
    for site in sites {
        for origin in site.origins() {
            by_host
                .entry(crate::politeness::key_of(&origin))
                .or_default()
                .push(site);
        }
    }
    let mut notes = Vec::new();
    for (host, sharing) in by_host {
        let slowest = sharing
            .iter()
            .max_by_key(|site| site.host_rate.min_interval())
            .expect("a host named by a site");
        if sharing
            .iter()
            .all(|site| site.host_rate.min_interval() == slowest.host_rate.min_interval())
        {
            continue;
        }
        let named: Vec<String> = sharing
            .iter()
            .map(|site| format!("`{}` ({})", site.name, site.host_rate))
            .collect();
        let first = sharing[0];
        notes.push(format!(
            "{}:{}: host_rate: sites {} share {host}: one politeness gate serves it, at the \
             slowest of their rates ({}) for all of them",
            first.source.display(),
            first.line,
            named.join(", "),
            slowest.host_rate
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sites(text: &str) -> Vec<Site> {
        super::super::parse_str(std::path::Path::new("s.toml"), text).expect("a valid schedule")
    }

    #[test]
    fn sites_sharing_a_host_at_different_rates_are_named_with_the_rate_that_holds() {
        let notes = shared_host_notes(&sites(
            "[[site]]\nname = \"a\"\nseeds = [\"https://x.test/a\"]\nhost_rate = \"5/s\"\n\
             [[site]]\nname = \"b\"\nsitemaps = [\"https://x.test/s.xml\"]\nhost_rate = \"1/s\"\n\
             [[site]]\nname = \"c\"\nseeds = [\"https://y.test/\"]\nhost_rate = \"9/s\"\n",
        ));
        assert_eq!(
            notes,
            [
                "s.toml:1: host_rate: sites `a` (5/s), `b` (1/s) share x.test: one politeness \
              gate serves it, at the slowest of their rates (1/s) for all of them"
            ]
        );
    }

    #[test]
    fn sites_sharing_a_host_at_one_rate_say_nothing() {
        let notes = shared_host_notes(&sites(
            "[[site]]\nname = \"a\"\nseeds = [\"https://x.test/a\"]\n\
             [[site]]\nname = \"b\"\nseeds = [\"https://x.test/b\"]\n",
        ));
        assert!(notes.is_empty(), "{notes:?}");
    }
}
