//! Where `freshet inspect` reads a document from (a file, with the URL it stands for, or an
//! http(s) URL), shared by its subcommands.

use url::Url;

/// Where the document comes from.
#[derive(Debug, clap::Args)]
pub struct Source {
    /// A file path, or an http(s) URL to fetch.
    pub file_or_url: String,
    /// The URL a local file stands for: the base of relative links and, for a sitemap, its
    /// home host and directory, so that the cross-host and directory rules apply as `freshet
    /// run` applies them. Without it a file has no host: a sitemap lists every URL it holds,
    /// and relative links resolve against http://localhost/.
    #[arg(long, value_name = "URL")]
    pub base: Option<Url>,
    /// Print JSON instead of a summary.
    #[arg(long)]
    pub json: bool,
    /// A special-purpose range (e.g. `127.0.0.0/8`) a fetched URL may connect to, as a
    /// schedule's `allow_networks`; repeatable. Loopback, private, link-local and the other
    /// special ranges are refused without it, on every hop.
    #[arg(long = "allow-network", value_name = "CIDR")]
    pub allow_networks: Vec<crate::fetch::Cidr>,
}

impl Source {
    /// Whether the document is fetched (an http(s) URL), not read from a file.
    pub fn is_url(&self) -> bool {
        let arg = &self.file_or_url;
        arg.starts_with("http://") || arg.starts_with("https://")
    }
}

/// What a local file read without `--base` stands for.
pub fn placeholder_base() -> Url {
    Url::parse("http://localhost/").expect("a valid URL")
}
