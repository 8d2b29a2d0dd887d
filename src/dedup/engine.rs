//! [`DedupEngine`]: the state of the duplicate and canonical-page engine and the one call the
//! refresher makes per fetched page, [`DedupEngine::observe`].
//!
//! Per page: the redirect chain feeds the permanent-redirect table (301, 308) and the
//! temporary-redirect classes (302, 303, 307, keyed by the final target); the body is decoded and
//! its main text extracted; the text's exact fingerprint files the URL in a content class and its
//! simhash in the near-duplicate index; links are normalised and rewritten through the permanent
//! table, and counted as in-links of their targets; a `rel=canonical` is counted as a vote for its
//! target. Scores follow those counts, and every class the URL is in re-decides its canonical.
//!
//! The content of a fetch is filed under the requested URL rewritten through the permanent table
//! (for `a -302-> b` that is `a`, the stable address; for `a -301-> b` it is `b`). The final URL
//! of a temporary redirect serves the same content and joins the same content class.

use std::collections::{BTreeSet, HashMap};

use url::Url;

use super::class::{Class, ClassId, ClassKind, Hysteresis};
use super::config::DedupConfig;
use super::content;
use super::extract::Extracted;
use super::fingerprint::simhash;
use super::fingerprint_set::FingerprintSet;
use super::marks::Unsaved;
use super::near::NearIndex;
use super::page::{DedupError, DedupOutcome, FetchedPage, Hop};
use super::redirects::{PermanentRedirects, RedirectError};
use super::resemblance::{LshIndex, Sketch};
use super::score::{self, ScoreInputs};
use super::url_record::{FiledWith, UrlRecord, UrlRecords};
use super::urlnorm::{UrlError, normalize, url_fingerprint};

/// The duplicate and canonical-page engine.
#[derive(Debug, Clone)]
pub struct DedupEngine {
    /// Settings.
    pub(super) config: DedupConfig,
    /// Known URLs, by fingerprint.
    pub(super) urls: UrlRecords,
    /// Classes by id.
    pub(super) classes: HashMap<ClassId, Class>,
    /// The permanent-redirect table.
    pub(super) permanent: PermanentRedirects,
    /// Redirect errors (each once).
    pub(super) errors: Vec<RedirectError>,
    /// Links pointing at a URL fingerprint from other known pages.
    pub(super) in_links: HashMap<u64, u32>,
    /// Of those, links from pages on another host: a mirror's pages link to the mirror, the
    /// rest of the web links to the original.
    pub(super) external_in_links: HashMap<u64, u32>,
    /// `rel=canonical` votes per URL fingerprint.
    pub(super) votes: HashMap<u64, u32>,
    /// The fingerprints of the URLs that serve each content fingerprint.
    pub(super) by_content: HashMap<u64, FingerprintSet>,
    /// Simhashes of the distinct contents, keyed by content fingerprint: candidates.
    pub(super) near: NearIndex,
    /// Resemblance sketches of the distinct contents, by content fingerprint: verification.
    pub(super) sketches: HashMap<u64, Sketch>,
    /// LSH bands of the sketches, by content fingerprint: candidates simhash misses.
    pub(super) lsh: LshIndex,
    /// Near group of each content fingerprint in the index.
    pub(super) group_of: HashMap<u64, u64>,
    /// Content fingerprints of each near group.
    pub(super) groups: HashMap<u64, FingerprintSet>,
    /// The next near-group number.
    pub(super) next_group: u64,
    /// What changed since the state was last saved ([`DedupEngine::take_changes`]).
    pub(super) unsaved: Unsaved,
}

impl DedupEngine {
    /// An empty engine.
    pub fn new(config: DedupConfig) -> Self {
        DedupEngine {
            near: NearIndex::new(config.near_distance),
            sketches: HashMap::new(),
            lsh: LshIndex::new(),
            config,
            urls: UrlRecords::default(),
            classes: HashMap::new(),
            permanent: PermanentRedirects::new(),
            errors: Vec::new(),
            in_links: HashMap::new(),
            external_in_links: HashMap::new(),
            votes: HashMap::new(),
            by_content: HashMap::new(),
            group_of: HashMap::new(),
            groups: HashMap::new(),
            next_group: 1,
            unsaved: Unsaved::default(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &DedupConfig {
        &self.config
    }

    fn hysteresis(&self) -> Hysteresis {
        Hysteresis {
            max_members: self.config.max_members,
            additive: self.config.additive_margin,
            multiplicative: self.config.multiplicative_margin,
        }
    }

    pub(super) fn norm(&self, url: &str) -> Result<String, UrlError> {
        normalize(url, None, &self.config.url_rules).map(String::from)
    }

    /// `url`'s record, created if new, marked as changed.
    pub(super) fn record(&mut self, url: &str) -> &mut UrlRecord {
        self.unsaved.url(url);
        self.urls.get_or_insert(url)
    }

    /// Files one fetched page; see the module documentation.
    pub fn observe(&mut self, page: FetchedPage) -> Result<DedupOutcome, DedupError> {
        self.observe_extracted(page, None)
    }

    /// [`DedupEngine::observe`] with the page's extraction done already by
    /// [`content::extract_page`] with this engine's URL rules (the refresher extracts once per
    /// fetch, for change detection and for the engine); `None` extracts here.
    pub fn observe_extracted(
        &mut self,
        page: FetchedPage,
        extracted: Option<Extracted>,
    ) -> Result<DedupOutcome, DedupError> {
        let url = self.norm(&page.url)?;
        let final_url = self.norm(&page.final_url)?;
        let hops = page
            .redirect_chain
            .iter()
            .map(|h| Ok((self.norm(&h.url)?, h.status)))
            .collect::<Result<Vec<_>, UrlError>>()?;
        let errors = self.record_redirects(&url, &final_url, &hops);

        let owner = self.permanent.rewrite(&url).to_string();
        let extracted =
            extracted.unwrap_or_else(|| content::extract_page(&page, &self.config.url_rules));
        let (content_fp, sim) = self.fingerprints(&page, &extracted);
        let sketch = Sketch::of(&extracted.main_text);
        let mut seen = BTreeSet::new();
        let links: Vec<String> = extracted
            .links
            .iter()
            .map(|l| self.permanent.rewrite(l).to_string())
            .filter(|l| seen.insert(l.clone()))
            .collect();

        let mut touched = BTreeSet::new();
        touched.insert(owner.clone());
        if page.sitemap_priority.is_some() || !self.urls.contains(&owner) {
            self.record(&owner).sitemap_priority = page.sitemap_priority;
        }
        self.set_out_links(&owner, &links, &mut touched);
        self.record(&owner).filed_with = Some(FiledWith {
            redirects: self.permanent.digest(),
            content_type: FiledWith::content_type_key(page.content_type.as_deref()),
        });
        self.set_vote(&owner, extracted.canonical.clone(), &mut touched);
        self.set_content(&owner, content_fp, sim, &sketch, &mut touched);
        if final_url != owner && !self.permanent.is_source(&final_url) {
            touched.insert(final_url.clone());
            self.set_content(&final_url, content_fp, sim, &sketch, &mut touched);
        }
        for u in &touched {
            self.sync(u);
        }

        let class = ClassId {
            kind: ClassKind::Content,
            key: content_fp,
        };
        Ok(DedupOutcome {
            is_canonical: self.is_canonical(&owner),
            reason: self.explain(&owner),
            canonical: self.classes.get(&class).and_then(|c| c.canonical.clone()),
            url: owner,
            content_fp,
            simhash: sim,
            title: extracted.title,
            main_text: extracted.main_text,
            links,
            rel_canonical: extracted.canonical,
            class,
            errors,
        })
    }

    /// Files again a page whose body is, byte for byte, the one last filed for the same URL
    /// (fetched without a redirect): what [`DedupEngine::observe_extracted`] would do with it,
    /// without extracting it. Its links, vote and content are as filed; its sitemap priority is
    /// taken and its classes are settled again (the score may have moved, a place in a full
    /// class may have opened). `None` when that is not known here ([`Self::can_refile_same_bytes`]):
    /// the page must then be filed whole.
    pub fn refile_same_bytes(
        &mut self,
        url: &str,
        content_type: Option<&str>,
        content_fp: u64,
        sitemap_priority: Option<f64>,
    ) -> Option<DedupOutcome> {
        if !self.can_refile_same_bytes(url, content_type, content_fp) {
            return None;
        }
        let owner = self.norm(url).ok()?;
        let record = self.record(&owner);
        if sitemap_priority.is_some() {
            record.sitemap_priority = sitemap_priority;
        }
        let (simhash, rel_canonical) = (
            record.simhash.unwrap_or(0),
            record.declared_canonical.clone(),
        );
        self.sync(&owner);
        let class = ClassId {
            kind: ClassKind::Content,
            key: content_fp,
        };
        Some(DedupOutcome {
            is_canonical: self.is_canonical(&owner),
            reason: self.explain(&owner),
            canonical: self.classes.get(&class).and_then(|c| c.canonical.clone()),
            url: owner,
            content_fp,
            simhash,
            title: None,
            main_text: String::new(),
            links: Vec::new(),
            rel_canonical,
            class,
            errors: Vec::new(),
        })
    }

    /// Whether [`Self::refile_same_bytes`] can file `url` again with `content_fp` unextracted:
    /// the engine holds that content for it from a fetch of the URL itself (not a permanent
    /// redirect's source, not a temporary redirect) served as `content_type`, and the
    /// permanent-redirect table holds the hops its links were rewritten through (its digest is
    /// the one they were filed with).
    pub fn can_refile_same_bytes(
        &self,
        url: &str,
        content_type: Option<&str>,
        content_fp: u64,
    ) -> bool {
        let filed_with = FiledWith {
            redirects: self.permanent.digest(),
            content_type: FiledWith::content_type_key(content_type),
        };
        let Ok(url) = self.norm(url) else {
            return false;
        };
        !self.permanent.is_source(&url)
            && self.urls.get(&url).is_some_and(|r| {
                r.content_fp == Some(content_fp)
                    && r.temp_target.is_none()
                    && r.sketch.is_some()
                    && r.filed_with == Some(filed_with)
            })
    }

    /// Records the redirects of a fetch that produced no page (too many redirects, a loop, an
    /// error at the end): `chain` as in [`FetchedPage::redirect_chain`], `last` the URL the last
    /// redirect pointed to. Returns the redirect errors (cycles) found.
    pub fn observe_redirects(
        &mut self,
        url: &str,
        chain: &[Hop],
        last: &str,
    ) -> Result<Vec<RedirectError>, DedupError> {
        let url = self.norm(url)?;
        let last = self.norm(last)?;
        let hops = chain
            .iter()
            .map(|h| Ok((self.norm(&h.url)?, h.status)))
            .collect::<Result<Vec<_>, UrlError>>()?;
        if hops.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.record_redirects(&url, &last, &hops))
    }

    /// Applies a fetch's redirect chain to the permanent table and the temporary targets.
    fn record_redirects(
        &mut self,
        url: &str,
        final_url: &str,
        hops: &[(String, u16)],
    ) -> Vec<RedirectError> {
        let mut errors = Vec::new();
        let mut touched = Vec::new();
        if hops.is_empty() && url == final_url {
            // It answered itself: any redirect it had is gone.
            if self.permanent.remove(url) {
                self.unsaved.redirect(url);
            }
            if self.urls.get(url).is_some_and(|r| r.temp_target.is_some()) {
                self.record(url).temp_target = None;
                touched.push(url.to_string());
            }
        }
        for (i, (source, status)) in hops.iter().enumerate() {
            let next = hops.get(i + 1).map_or(final_url, |(u, _)| u.as_str());
            match status {
                301 | 308 => {
                    let inserted = self.permanent.insert(source, next);
                    if inserted.is_ok() {
                        self.unsaved.redirect(source);
                    }
                    if let Err(e) = inserted {
                        tracing::warn!(url = %source, error = %e, "permanent redirect refused");
                        if !self.errors.contains(&e) {
                            self.errors.push(e.clone());
                        }
                        errors.push(e);
                    }
                    if self.urls.contains(source) {
                        // It is no longer a page: its content now lives at the target.
                        let record = self.record(source);
                        record.temp_target = None;
                        record.sketch = None;
                        let old = (record.content_fp.take(), record.simhash.take());
                        if let (Some(fp), Some(sim)) = old {
                            let mut others = BTreeSet::new();
                            self.leave_content(source, fp, sim, &mut others);
                            touched.extend(others);
                        }
                        touched.push(source.clone());
                    }
                }
                302 | 303 | 307 => {
                    if self.permanent.remove(source) {
                        self.unsaved.redirect(source);
                    }
                    self.record(source).temp_target = Some(final_url.to_string());
                    touched.push(source.clone());
                }
                _ => {}
            }
        }
        for u in touched {
            self.sync(&u);
        }
        errors
    }

    fn fingerprints(&self, page: &FetchedPage, extracted: &Extracted) -> (u64, u64) {
        let sim = if extracted.main_text.is_empty() {
            0
        } else {
            simhash(&extracted.main_text, self.config.shingle_words)
        };
        (content::content_fp(extracted, &page.body), sim)
    }

    pub(super) fn set_out_links(
        &mut self,
        owner: &str,
        links: &[String],
        touched: &mut BTreeSet<String>,
    ) {
        let own = url_fingerprint(owner);
        let new: BTreeSet<u64> = links
            .iter()
            .map(|l| url_fingerprint(l))
            .filter(|&fp| fp != own)
            .collect();
        let old: BTreeSet<u64> = self.record(owner).out_links.iter().copied().collect();
        for fp in old.difference(&new) {
            if let Some(n) = self.in_links.get_mut(fp) {
                *n = n.saturating_sub(1);
            }
            touched.extend(self.urls.url_of(*fp).map(String::from));
        }
        for fp in new.difference(&old) {
            *self.in_links.entry(*fp).or_default() += 1;
            touched.extend(self.urls.url_of(*fp).map(String::from));
        }
        let host = |u: &str| {
            Url::parse(u)
                .ok()
                .and_then(|u| u.host_str().map(str::to_string))
        };
        let own_host = host(owner);
        let new_external: BTreeSet<u64> = links
            .iter()
            .filter(|l| host(l) != own_host)
            .map(|l| url_fingerprint(l))
            .filter(|&fp| fp != own)
            .collect();
        let old_external: BTreeSet<u64> = self
            .record(owner)
            .external_out_links
            .iter()
            .copied()
            .collect();
        for fp in old_external.difference(&new_external) {
            if let Some(n) = self.external_in_links.get_mut(fp) {
                *n = n.saturating_sub(1);
            }
            touched.extend(self.urls.url_of(*fp).map(String::from));
        }
        for fp in new_external.difference(&old_external) {
            *self.external_in_links.entry(*fp).or_default() += 1;
            touched.extend(self.urls.url_of(*fp).map(String::from));
        }
        let record = self.record(owner);
        record.out_links = new.into_iter().collect();
        record.external_out_links = new_external.into_iter().collect();
    }

    pub(super) fn set_vote(
        &mut self,
        owner: &str,
        target: Option<String>,
        touched: &mut BTreeSet<String>,
    ) {
        let old = std::mem::replace(&mut self.record(owner).declared_canonical, target.clone());
        if old == target {
            return;
        }
        if let Some(old) = old {
            let fp = url_fingerprint(&old);
            if let Some(n) = self.votes.get_mut(&fp) {
                *n = n.saturating_sub(1);
            }
            touched.extend(self.urls.url_of(fp).map(String::from));
        }
        if let Some(new) = target {
            let fp = url_fingerprint(&new);
            *self.votes.entry(fp).or_default() += 1;
            touched.extend(self.urls.url_of(fp).map(String::from));
        }
    }

    /// The classes `url` belongs in now.
    pub(super) fn wanted_classes(&self, url: &str) -> Vec<ClassId> {
        let Some(record) = self.urls.get(url) else {
            return Vec::new();
        };
        if self.permanent.is_source(url) {
            return Vec::new();
        }
        let mut out = Vec::new();
        if let Some(fp) = record.content_fp {
            out.push(ClassId {
                kind: ClassKind::Content,
                key: fp,
            });
            if let Some(&g) = self.group_of.get(&fp)
                && self.groups.get(&g).is_some_and(|c| c.len() > 1)
            {
                out.push(ClassId {
                    kind: ClassKind::Near,
                    key: g,
                });
            }
        }
        if let Some(target) = &record.temp_target {
            out.push(ClassId {
                kind: ClassKind::Redirect,
                key: url_fingerprint(target),
            });
        }
        out
    }

    /// The score of a known URL now.
    pub fn score(&self, url: &str) -> f64 {
        score::score(url, &self.score_inputs(url), &self.config.score)
    }

    pub(super) fn score_inputs(&self, url: &str) -> ScoreInputs {
        let fp = url_fingerprint(url);
        ScoreInputs {
            sitemap_priority: self.urls.get(url).and_then(|r| r.sitemap_priority),
            canonical_votes: self.votes.get(&fp).copied().unwrap_or(0),
            in_links: self.in_links.get(&fp).copied().unwrap_or(0),
            external_in_links: self.external_in_links.get(&fp).copied().unwrap_or(0),
        }
    }

    /// Brings `url`'s class memberships and scores up to date.
    pub(super) fn sync(&mut self, url: &str) {
        let wanted = self.wanted_classes(url);
        let h = self.hysteresis();
        let old = self
            .urls
            .get(url)
            .map(|r| r.memberships.clone())
            .unwrap_or_default();
        // Near classes `url` leaves: a place it held may go to the best of the rest.
        let mut opened = Vec::new();
        for id in old.iter().filter(|id| !wanted.contains(id)) {
            if let Some(class) = self.classes.get_mut(id) {
                self.unsaved.class(*id);
                if class.remove(url, &h) && id.kind == ClassKind::Near {
                    opened.push(id.key);
                }
                if class.members.is_empty() {
                    self.classes.remove(id);
                }
            }
        }
        let score = self.score(url);
        let mut memberships = Vec::new();
        for id in wanted {
            self.unsaved.class(id);
            let class = self.classes.entry(id).or_insert_with(|| Class::new(id));
            let evicted = class.upsert(url, score, &h);
            for gone in evicted.iter().filter(|g| g.as_str() != url) {
                if let Some(r) = self.urls.get_mut(gone) {
                    r.memberships.retain(|m| *m != id);
                    self.unsaved.url(gone);
                }
            }
            if !evicted.iter().any(|g| g == url) {
                memberships.push(id);
            }
        }
        if let Some(record) = self.urls.get_mut(url)
            && record.memberships != memberships
        {
            record.memberships = memberships;
            self.unsaved.url(url);
        }
        for group in opened {
            self.refill_near(group, url);
        }
    }
}
