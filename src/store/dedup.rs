//! The dedup engine's state in SQLite (tables `dedup_*` of `migrations/0002_dedup.sql`).
//!
//! The refresher loads the whole state once at start ([`Store::load_dedup_state`], then
//! `DedupEngine::from_state`). After each fetch it compares the engine's state with what was last
//! saved ([`SavedDedup::changes_to`]) and writes only the rows that differ, in one transaction
//! ([`Store::save_dedup`]), together with the planner weights and documents that follow from them.
//! The reports read the same tables ([`Store::duplicate_classes`], [`Store::redirect_cycles`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use sqlx::{Sqlite, Transaction};

use super::documents::DocumentWrite;
use super::{Store, hash_from_db, hash_to_db};
use crate::dedup::{Class, ClassId, ClassKind, DedupState, Member, RedirectError, UrlRecord};

/// The name of a class kind in the tables and reports.
pub fn kind_name(kind: ClassKind) -> &'static str {
    match kind {
        ClassKind::Content => "content",
        ClassKind::Redirect => "redirect",
        ClassKind::Near => "near",
    }
}

fn kind_from_name(name: &str) -> Option<ClassKind> {
    match name {
        "content" => Some(ClassKind::Content),
        "redirect" => Some(ClassKind::Redirect),
        "near" => Some(ClassKind::Near),
        _ => None,
    }
}

/// The rows that changed between two saves of the engine's state.
#[derive(Debug, Clone, Default)]
pub struct DedupChanges {
    /// URL records new or changed.
    pub urls: Vec<UrlRecord>,
    /// URL records gone.
    pub removed_urls: Vec<String>,
    /// Classes new or changed (members and canonical written again).
    pub classes: Vec<Class>,
    /// Classes gone.
    pub removed_classes: Vec<ClassId>,
    /// Permanent-redirect hops new or changed: (source, immediate target).
    pub redirects: Vec<(String, String)>,
    /// Permanent-redirect sources that no longer redirect.
    pub removed_redirects: Vec<String>,
    /// Redirect errors not seen before.
    pub new_errors: Vec<RedirectError>,
    /// Near groups of contents, new or moved: (content fingerprint, group).
    pub near: Vec<(u64, u64)>,
    /// Contents no longer in a near group.
    pub removed_near: Vec<u64>,
    /// The engine's next near-group number, when it moved.
    pub next_group: Option<u64>,
    /// URLs whose canonical status (hence planner weight and document) may have moved: changed
    /// records, old and new members of changed classes, changed redirect sources.
    pub touched: BTreeSet<String>,
}

impl DedupChanges {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.urls.is_empty()
            && self.removed_urls.is_empty()
            && self.classes.is_empty()
            && self.removed_classes.is_empty()
            && self.redirects.is_empty()
            && self.removed_redirects.is_empty()
            && self.new_errors.is_empty()
            && self.near.is_empty()
            && self.removed_near.is_empty()
            && self.next_group.is_none()
    }
}

/// The engine's state as last saved, indexed so the next save can write only what changed.
#[derive(Debug, Clone, Default)]
pub struct SavedDedup {
    /// URL records by URL.
    urls: HashMap<String, UrlRecord>,
    /// Classes by id.
    classes: HashMap<ClassId, Class>,
    /// Permanent-redirect hops.
    redirects: BTreeMap<String, String>,
    /// Redirect errors.
    errors: Vec<RedirectError>,
    /// Near group of each content.
    near: HashMap<u64, u64>,
    /// The next near-group number.
    next_group: u64,
}

impl SavedDedup {
    /// What was just loaded (or saved) as `state`.
    pub fn from_state(state: &DedupState) -> Self {
        let mut saved = SavedDedup::default();
        saved.changes_to(state.clone());
        saved
    }

    /// The rows of `now` that differ from the last save; `now` becomes the last save.
    pub fn changes_to(&mut self, now: DedupState) -> DedupChanges {
        let mut out = DedupChanges::default();
        let mut seen: BTreeSet<String> = BTreeSet::new();
        for record in now.urls {
            seen.insert(record.url.clone());
            if self.urls.get(&record.url) != Some(&record) {
                out.touched.insert(record.url.clone());
                out.urls.push(record.clone());
                self.urls.insert(record.url.clone(), record);
            }
        }
        let gone: Vec<String> = self
            .urls
            .keys()
            .filter(|u| !seen.contains(*u))
            .cloned()
            .collect();
        for url in gone {
            self.urls.remove(&url);
            out.touched.insert(url.clone());
            out.removed_urls.push(url);
        }

        let mut seen: BTreeSet<ClassId> = BTreeSet::new();
        for class in now.classes {
            seen.insert(class.id);
            let old = self.classes.get(&class.id);
            if old == Some(&class) {
                continue;
            }
            let old_members = old.into_iter().flat_map(|c| &c.members);
            out.touched
                .extend(old_members.chain(&class.members).map(|m| m.url.clone()));
            out.classes.push(class.clone());
            self.classes.insert(class.id, class);
        }
        let gone: Vec<ClassId> = self
            .classes
            .keys()
            .filter(|id| !seen.contains(*id))
            .copied()
            .collect();
        for id in gone {
            if let Some(class) = self.classes.remove(&id) {
                out.touched.extend(class.members.into_iter().map(|m| m.url));
            }
            out.removed_classes.push(id);
        }

        let hops: BTreeMap<String, String> = now.permanent.into_iter().collect();
        for (source, target) in &hops {
            if self.redirects.get(source) != Some(target) {
                out.touched.insert(source.clone());
                out.redirects.push((source.clone(), target.clone()));
            }
        }
        for source in self.redirects.keys().filter(|s| !hops.contains_key(*s)) {
            out.touched.insert(source.clone());
            out.removed_redirects.push(source.clone());
        }
        self.redirects = hops;

        for error in now.errors {
            if !self.errors.contains(&error) {
                out.new_errors.push(error.clone());
                self.errors.push(error);
            }
        }

        let near: HashMap<u64, u64> = now.near_groups.into_iter().collect();
        for (&content, &group) in &near {
            if self.near.get(&content) != Some(&group) {
                out.near.push((content, group));
            }
        }
        out.removed_near = self
            .near
            .keys()
            .filter(|c| !near.contains_key(*c))
            .copied()
            .collect();
        self.near = near;
        if now.next_group != self.next_group {
            out.next_group = Some(now.next_group);
            self.next_group = now.next_group;
        }
        out
    }
}

/// Everything one fetch writes back in one transaction.
#[derive(Debug, Default)]
pub struct DedupWrite {
    /// The engine's changed rows.
    pub changes: DedupChanges,
    /// New planner weights: (URL, weight). URLs not in `urls` are skipped.
    pub weights: Vec<(String, f64)>,
    /// A canonical page's latest body to keep.
    pub document: Option<DocumentWrite>,
    /// URLs no longer canonical whose documents go.
    pub drop_documents: Vec<String>,
}

/// One class as the duplicates report shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassRow {
    /// `content`, `redirect` or `near`.
    pub kind: &'static str,
    /// Its key (content fingerprint, target fingerprint or group number).
    pub key: u64,
    /// The canonical URL.
    pub canonical: Option<String>,
    /// Members, best first.
    pub members: Vec<String>,
    /// Why the canonical is what it is.
    pub reason: String,
}

type UrlDbRow = (
    String,
    Option<i64>,
    Option<i64>,
    Option<f64>,
    Option<String>,
    Option<String>,
    String,
    String,
);

/// kind, key, canonical, reason, members as a JSON array.
type ClassDbRow = (String, i64, Option<String>, String, Option<String>);

impl Store {
    /// The engine's whole saved state (empty on a new database).
    pub async fn load_dedup_state(&self) -> anyhow::Result<DedupState> {
        let mut state = DedupState::default();
        let rows: Vec<UrlDbRow> = sqlx::query_as(
            "SELECT url, content_fp, simhash, sitemap_priority, temp_target, declared_canonical,
                    out_links, memberships FROM dedup_urls ORDER BY url",
        )
        .fetch_all(self.pool())
        .await?;
        for (url, fp, sim, priority, temp, declared, links, memberships) in rows {
            state.urls.push(UrlRecord {
                out_links: serde_json::from_str(&links)?,
                memberships: serde_json::from_str(&memberships)?,
                url,
                content_fp: fp.map(hash_from_db),
                simhash: sim.map(hash_from_db),
                sitemap_priority: priority,
                temp_target: temp,
                declared_canonical: declared,
            });
        }
        let mut members: HashMap<(String, i64), Vec<Member>> = HashMap::new();
        let rows: Vec<(String, i64, String, f64)> = sqlx::query_as(
            "SELECT kind, key, url, score FROM dedup_members ORDER BY kind, key, rank",
        )
        .fetch_all(self.pool())
        .await?;
        for (kind, key, url, score) in rows {
            members
                .entry((kind, key))
                .or_default()
                .push(Member { url, score });
        }
        let rows: Vec<(String, i64, Option<String>, String)> =
            sqlx::query_as("SELECT kind, key, canonical, reason FROM dedup_classes ORDER BY 1, 2")
                .fetch_all(self.pool())
                .await?;
        for (kind_text, key, canonical, reason) in rows {
            let Some(kind) = kind_from_name(&kind_text) else {
                continue;
            };
            state.classes.push(Class {
                id: ClassId {
                    kind,
                    key: hash_from_db(key),
                },
                canonical,
                members: members.remove(&(kind_text, key)).unwrap_or_default(),
                reason,
            });
        }
        state.permanent =
            sqlx::query_as("SELECT source, target FROM dedup_redirects ORDER BY source")
                .fetch_all(self.pool())
                .await?;
        state.errors = self
            .redirect_cycles()
            .await?
            .into_iter()
            .map(|urls| RedirectError::Cycle { urls })
            .collect();
        let near: Vec<(i64, i64)> =
            sqlx::query_as("SELECT content_fp, group_id FROM dedup_near_groups ORDER BY 1")
                .fetch_all(self.pool())
                .await?;
        state.near_groups = near
            .into_iter()
            .map(|(c, g)| (hash_from_db(c), hash_from_db(g)))
            .collect();
        let next: Option<i64> =
            sqlx::query_scalar("SELECT value FROM dedup_meta WHERE name = 'next_group'")
                .fetch_optional(self.pool())
                .await?;
        state.next_group = next.map_or(1, hash_from_db);
        Ok(state)
    }

    /// Writes one fetch's dedup results in one transaction.
    pub async fn save_dedup(&self, write: &DedupWrite, now_ms: i64) -> sqlx::Result<()> {
        let mut tx = self.pool().begin().await?;
        save_changes(&mut tx, &write.changes, now_ms).await?;
        for (url, weight) in &write.weights {
            sqlx::query("UPDATE urls SET weight = ? WHERE url = ? AND weight <> ?")
                .bind(weight)
                .bind(url)
                .bind(weight)
                .execute(&mut *tx)
                .await?;
        }
        if let Some(document) = &write.document {
            super::documents::put(&mut tx, document).await?;
        }
        super::documents::delete(&mut tx, &write.drop_documents).await?;
        tx.commit().await
    }

    /// Classes ordered by kind and key: all of them, or (`all` false) those worth reporting:
    /// every temporary-redirect class, and content and near classes of two members or more.
    pub async fn duplicate_classes(&self, all: bool) -> sqlx::Result<Vec<ClassRow>> {
        let rows: Vec<ClassDbRow> = sqlx::query_as(
            "SELECT c.kind, c.key, c.canonical, c.reason,
                    (SELECT json_group_array(url) FROM
                        (SELECT url FROM dedup_members m
                         WHERE m.kind = c.kind AND m.key = c.key ORDER BY rank))
             FROM dedup_classes c ORDER BY c.kind, c.key",
        )
        .fetch_all(self.pool())
        .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(kind, key, canonical, reason, members)| {
                let kind = kind_name(kind_from_name(&kind)?);
                let members: Vec<String> = members
                    .and_then(|m| serde_json::from_str(&m).ok())
                    .unwrap_or_default();
                Some(ClassRow {
                    kind,
                    key: hash_from_db(key),
                    canonical,
                    members,
                    reason,
                })
            })
            .filter(|c| all || c.kind == "redirect" || c.members.len() > 1)
            .collect())
    }

    /// Permanent-redirect cycles recorded, oldest first: each chain of URLs (last = first).
    pub async fn redirect_cycles(&self) -> sqlx::Result<Vec<Vec<String>>> {
        let chains: Vec<String> =
            sqlx::query_scalar("SELECT chain FROM dedup_redirect_errors ORDER BY id")
                .fetch_all(self.pool())
                .await?;
        Ok(chains
            .iter()
            .filter_map(|c| serde_json::from_str(c).ok())
            .collect())
    }

    /// Which of `urls` are in the `urls` table already.
    pub async fn known_urls(&self, urls: &[String]) -> sqlx::Result<BTreeSet<String>> {
        let mut known = BTreeSet::new();
        for url in urls {
            let hit: Option<i64> = sqlx::query_scalar("SELECT id FROM urls WHERE url = ?")
                .bind(url)
                .fetch_optional(self.pool())
                .await?;
            if hit.is_some() {
                known.insert(url.clone());
            }
        }
        Ok(known)
    }

    /// What named a URL (a sitemap, feed, seed or the page whose link it was), if it is known.
    pub async fn discovered_from(&self, url: &str) -> sqlx::Result<Option<String>> {
        let found: Option<Option<String>> =
            sqlx::query_scalar("SELECT discovered_from FROM urls WHERE url = ?")
                .bind(url)
                .fetch_optional(self.pool())
                .await?;
        Ok(found.flatten())
    }

    /// Re-plans one URL after its weight moved: a new planned rate and due time.
    pub async fn set_planned(
        &self,
        url_id: i64,
        planned_per_day: f64,
        next_due_ms: i64,
    ) -> sqlx::Result<()> {
        sqlx::query("UPDATE urls SET planned_per_day = ?, next_due_ms = ? WHERE id = ?")
            .bind(planned_per_day)
            .bind(next_due_ms)
            .bind(url_id)
            .execute(self.pool())
            .await?;
        Ok(())
    }
}

/// Writes the changed rows of the engine's state.
async fn save_changes(
    tx: &mut Transaction<'_, Sqlite>,
    changes: &DedupChanges,
    now_ms: i64,
) -> sqlx::Result<()> {
    for r in &changes.urls {
        sqlx::query(
            "INSERT OR REPLACE INTO dedup_urls (url, content_fp, simhash, sitemap_priority,
                 temp_target, declared_canonical, out_links, memberships)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&r.url)
        .bind(r.content_fp.map(hash_to_db))
        .bind(r.simhash.map(hash_to_db))
        .bind(r.sitemap_priority)
        .bind(&r.temp_target)
        .bind(&r.declared_canonical)
        .bind(serde_json::to_string(&r.out_links).unwrap_or_else(|_| "[]".into()))
        .bind(serde_json::to_string(&r.memberships).unwrap_or_else(|_| "[]".into()))
        .execute(&mut **tx)
        .await?;
    }
    for url in &changes.removed_urls {
        sqlx::query("DELETE FROM dedup_urls WHERE url = ?")
            .bind(url)
            .execute(&mut **tx)
            .await?;
    }
    let ids = changes.classes.iter().map(|c| c.id);
    for id in changes.removed_classes.iter().copied().chain(ids) {
        sqlx::query("DELETE FROM dedup_classes WHERE kind = ? AND key = ?")
            .bind(kind_name(id.kind))
            .bind(hash_to_db(id.key))
            .execute(&mut **tx)
            .await?;
    }
    for class in &changes.classes {
        let (kind, key) = (kind_name(class.id.kind), hash_to_db(class.id.key));
        sqlx::query("INSERT INTO dedup_classes (kind, key, canonical, reason) VALUES (?, ?, ?, ?)")
            .bind(kind)
            .bind(key)
            .bind(&class.canonical)
            .bind(&class.reason)
            .execute(&mut **tx)
            .await?;
        for (rank, member) in class.members.iter().enumerate() {
            sqlx::query(
                "INSERT INTO dedup_members (kind, key, rank, url, score) VALUES (?, ?, ?, ?, ?)",
            )
            .bind(kind)
            .bind(key)
            .bind(rank as i64)
            .bind(&member.url)
            .bind(member.score)
            .execute(&mut **tx)
            .await?;
        }
    }
    for (source, target) in &changes.redirects {
        sqlx::query("INSERT OR REPLACE INTO dedup_redirects (source, target) VALUES (?, ?)")
            .bind(source)
            .bind(target)
            .execute(&mut **tx)
            .await?;
    }
    for source in &changes.removed_redirects {
        sqlx::query("DELETE FROM dedup_redirects WHERE source = ?")
            .bind(source)
            .execute(&mut **tx)
            .await?;
    }
    for RedirectError::Cycle { urls } in &changes.new_errors {
        sqlx::query(
            "INSERT OR IGNORE INTO dedup_redirect_errors (chain, first_seen_ms) VALUES (?, ?)",
        )
        .bind(serde_json::to_string(urls).unwrap_or_default())
        .bind(now_ms)
        .execute(&mut **tx)
        .await?;
    }
    for (content, group) in &changes.near {
        sqlx::query(
            "INSERT OR REPLACE INTO dedup_near_groups (content_fp, group_id) VALUES (?, ?)",
        )
        .bind(hash_to_db(*content))
        .bind(hash_to_db(*group))
        .execute(&mut **tx)
        .await?;
    }
    for content in &changes.removed_near {
        sqlx::query("DELETE FROM dedup_near_groups WHERE content_fp = ?")
            .bind(hash_to_db(*content))
            .execute(&mut **tx)
            .await?;
    }
    if let Some(next) = changes.next_group {
        sqlx::query("INSERT OR REPLACE INTO dedup_meta (name, value) VALUES ('next_group', ?)")
            .bind(hash_to_db(next))
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}
