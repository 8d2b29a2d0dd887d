//! The dedup engine's state in SQLite (tables `dedup_*` of `migrations/0002_dedup.sql`).
//!
//! The refresher loads the whole state once at start ([`Store::load_dedup_state`], then
//! `DedupEngine::from_state`). After each fetch it takes the rows the engine changed since the
//! last save (`DedupEngine::take_changes`) and writes them in one transaction
//! ([`Store::save_dedup`]), together with the planner weights and documents that follow from them.
//! The reports read the same tables ([`Store::duplicate_classes`], [`Store::redirect_cycles`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use sqlx::{Any, Transaction};

use super::backend::BindReal;
use super::documents::DocumentWrite;
use super::{Store, hash_from_db, hash_to_db};
pub use crate::dedup::DedupChanges;
use crate::dedup::resemblance::Sketch;
use crate::dedup::url_record::FiledWith;
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
    Option<Vec<u8>>,
    String,
    Option<i64>,
    Option<i64>,
);

/// kind, key, canonical, reason, members as a JSON array.
type ClassDbRow = (String, i64, Option<String>, String);

impl Store {
    /// The engine's whole saved state (empty on a new database).
    pub async fn load_dedup_state(&self) -> anyhow::Result<DedupState> {
        let mut state = DedupState::default();
        let rows: Vec<UrlDbRow> = sqlx::query_as(
            "SELECT url, content_fp, simhash, sitemap_priority, temp_target, declared_canonical,
                    out_links, memberships, sketch, external_out_links, filed_redirects,
                    filed_content_type
             FROM dedup_urls ORDER BY url",
        )
        .fetch_all(self.reader())
        .await?;
        for row in rows {
            let (url, fp, sim, priority, temp, declared, links, memberships, sketch, external) = (
                row.0, row.1, row.2, row.3, row.4, row.5, row.6, row.7, row.8, row.9,
            );
            let (filed_redirects, filed_type) = (row.10, row.11);
            state.urls.push(UrlRecord {
                out_links: serde_json::from_str(&links)?,
                external_out_links: serde_json::from_str(&external)?,
                memberships: serde_json::from_str(&memberships)?,
                url,
                content_fp: fp.map(hash_from_db),
                simhash: sim.map(hash_from_db),
                sketch: sketch.map(|bytes: Vec<u8>| Sketch(bytes.into())),
                sitemap_priority: priority,
                temp_target: temp,
                declared_canonical: declared,
                filed_with: filed_redirects
                    .zip(filed_type)
                    .map(|(changes, kind)| FiledWith {
                        redirects: hash_from_db(changes),
                        content_type: hash_from_db(kind),
                    }),
            });
        }
        let mut members: HashMap<(String, i64), Vec<Member>> = HashMap::new();
        let rows: Vec<(String, i64, String, f64)> = sqlx::query_as(
            "SELECT kind, key, url, score FROM dedup_members ORDER BY kind, key, rank",
        )
        .fetch_all(self.reader())
        .await?;
        for (kind, key, url, score) in rows {
            members
                .entry((kind, key))
                .or_default()
                .push(Member { url, score });
        }
        let rows: Vec<(String, i64, Option<String>, String)> =
            sqlx::query_as("SELECT kind, key, canonical, reason FROM dedup_classes ORDER BY 1, 2")
                .fetch_all(self.reader())
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
                .fetch_all(self.reader())
                .await?;
        state.errors = self
            .redirect_cycles()
            .await?
            .into_iter()
            .map(|urls| RedirectError::Cycle { urls })
            .collect();
        let near: Vec<(i64, i64)> =
            sqlx::query_as("SELECT content_fp, group_id FROM dedup_near_groups ORDER BY 1")
                .fetch_all(self.reader())
                .await?;
        state.near_groups = near
            .into_iter()
            .map(|(c, g)| (hash_from_db(c), hash_from_db(g)))
            .collect();
        let next: Option<i64> =
            sqlx::query_scalar("SELECT value FROM dedup_meta WHERE name = 'next_group'")
                .fetch_optional(self.reader())
                .await?;
        state.next_group = next.map_or(1, hash_from_db);
        Ok(state)
    }

    /// Writes one fetch's dedup results in one transaction (shared with other writes,
    /// [`super::group_commit`]). Queued at once: saves queued in some order are committed in
    /// that order, so the caller may queue under the engine's lock and wait after releasing it.
    pub fn save_dedup(
        &self,
        write: Arc<DedupWrite>,
        now_ms: i64,
    ) -> impl Future<Output = sqlx::Result<()>> + Send + 'static + use<> {
        self.queue_grouped_beside_checks("save_dedup", move |mut tx| {
            let write = write.clone();
            async move {
                save_changes(&mut tx, &write.changes, now_ms).await?;
                for (url, weight) in &write.weights {
                    sqlx::query("UPDATE urls SET weight = $1 WHERE url = $2 AND weight <> $3")
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
                Ok((tx, ()))
            }
        })
    }

    /// Classes ordered by kind and key: all of them, or (`all` false) those worth reporting:
    /// every temporary-redirect class, and content and near classes of two members or more.
    pub async fn duplicate_classes(&self, all: bool) -> sqlx::Result<Vec<ClassRow>> {
        let rows: Vec<ClassDbRow> = sqlx::query_as(
            "SELECT kind, key, canonical, reason FROM dedup_classes ORDER BY kind, key",
        )
        .fetch_all(self.reader())
        .await?;
        let mut members: HashMap<(String, i64), Vec<String>> = HashMap::new();
        let member_rows: Vec<(String, i64, String)> =
            sqlx::query_as("SELECT kind, key, url FROM dedup_members ORDER BY kind, key, rank")
                .fetch_all(self.reader())
                .await?;
        for (kind, key, url) in member_rows {
            members.entry((kind, key)).or_default().push(url);
        }
        Ok(rows
            .into_iter()
            .filter_map(|(kind, key, canonical, reason)| {
                let members = members.remove(&(kind.clone(), key)).unwrap_or_default();
                let kind = kind_name(kind_from_name(&kind)?);
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
    /// The permanent redirects, grouped by final target (a chain `a -> b -> c` files `a` and
    /// `b` under `c`, as `explain` says of them): each target with the sources that end there,
    /// in URL order. A chain that loops (refused by the engine, never stored) ends where it
    /// would come back.
    pub async fn permanent_redirects_by_target(&self) -> sqlx::Result<Vec<(String, Vec<String>)>> {
        let pairs: Vec<(String, String)> =
            sqlx::query_as("SELECT source, target FROM dedup_redirects ORDER BY source")
                .fetch_all(self.reader())
                .await?;
        let next: HashMap<&str, &str> = pairs
            .iter()
            .map(|(source, target)| (source.as_str(), target.as_str()))
            .collect();
        let mut grouped: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
        for (source, _) in &pairs {
            let mut seen = BTreeSet::from([source.as_str()]);
            let mut at = source.as_str();
            while let Some(&target) = next.get(at) {
                if !seen.insert(target) {
                    break;
                }
                at = target;
            }
            grouped.entry(at).or_default().push(source.clone());
        }
        Ok(grouped
            .into_iter()
            .map(|(target, sources)| (target.to_string(), sources))
            .collect())
    }

    pub async fn redirect_cycles(&self) -> sqlx::Result<Vec<Vec<String>>> {
        let chains: Vec<String> =
            sqlx::query_scalar("SELECT chain FROM dedup_redirect_errors ORDER BY id")
                .fetch_all(self.reader())
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
            let hit: Option<i64> = sqlx::query_scalar("SELECT id FROM urls WHERE url = $1")
                .bind(url)
                .fetch_optional(self.reader())
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
            sqlx::query_scalar("SELECT discovered_from FROM urls WHERE url = $1")
                .bind(url)
                .fetch_optional(self.reader())
                .await?;
        Ok(found.flatten())
    }
}

/// Writes the changed rows of the engine's state.
async fn save_changes(
    tx: &mut Transaction<'_, Any>,
    changes: &DedupChanges,
    now_ms: i64,
) -> sqlx::Result<()> {
    for r in &changes.urls {
        sqlx::query(
            "INSERT INTO dedup_urls (url, content_fp, simhash, sitemap_priority,
                 temp_target, declared_canonical, out_links, memberships, sketch,
                 external_out_links, filed_redirects, filed_content_type)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
             ON CONFLICT (url) DO UPDATE SET content_fp = excluded.content_fp,
                 simhash = excluded.simhash, sitemap_priority = excluded.sitemap_priority,
                 temp_target = excluded.temp_target,
                 declared_canonical = excluded.declared_canonical,
                 out_links = excluded.out_links, memberships = excluded.memberships,
                 sketch = excluded.sketch, external_out_links = excluded.external_out_links,
                 filed_redirects = excluded.filed_redirects,
                 filed_content_type = excluded.filed_content_type",
        )
        .bind(&r.url)
        .bind(r.content_fp.map(hash_to_db))
        .bind(r.simhash.map(hash_to_db))
        .bind_real(r.sitemap_priority)
        .bind(&r.temp_target)
        .bind(&r.declared_canonical)
        .bind(serde_json::to_string(&r.out_links).unwrap_or_else(|_| "[]".into()))
        .bind(serde_json::to_string(&r.memberships).unwrap_or_else(|_| "[]".into()))
        .bind(r.sketch.as_ref().map(|s| s.0.to_vec()))
        .bind(serde_json::to_string(&r.external_out_links).unwrap_or_else(|_| "[]".into()))
        .bind(r.filed_with.map(|f| hash_to_db(f.redirects)))
        .bind(r.filed_with.map(|f| hash_to_db(f.content_type)))
        .execute(&mut **tx)
        .await?;
    }
    for url in &changes.removed_urls {
        sqlx::query("DELETE FROM dedup_urls WHERE url = $1")
            .bind(url)
            .execute(&mut **tx)
            .await?;
    }
    // A class that changed is written over below (its members deleted with it there): only
    // the classes gone are deleted here.
    for id in changes.removed_classes.iter().copied() {
        sqlx::query("DELETE FROM dedup_classes WHERE kind = $1 AND key = $2")
            .bind(kind_name(id.kind))
            .bind(hash_to_db(id.key))
            .execute(&mut **tx)
            .await?;
    }
    for class in &changes.classes {
        let (kind, key) = (kind_name(class.id.kind), hash_to_db(class.id.key));
        sqlx::query(
            // Another worker's engine may have written the same class (its key is a hash of
            // what the members share): the last one written stands.
            "INSERT INTO dedup_classes (kind, key, canonical, reason) VALUES ($1, $2, $3, $4)
             ON CONFLICT (kind, key) DO UPDATE SET canonical = excluded.canonical,
                 reason = excluded.reason",
        )
        .bind(kind)
        .bind(key)
        .bind(&class.canonical)
        .bind(&class.reason)
        .execute(&mut **tx)
        .await?;
        // The class row is locked now: members another engine wrote go, so the class is
        // this engine's whole.
        sqlx::query("DELETE FROM dedup_members WHERE kind = $1 AND key = $2")
            .bind(kind)
            .bind(key)
            .execute(&mut **tx)
            .await?;
        for (rank, member) in class.members.iter().enumerate() {
            sqlx::query(
                "INSERT INTO dedup_members (kind, key, rank, url, score) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (kind, key, url) DO UPDATE SET rank = excluded.rank,
                     score = excluded.score",
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
        sqlx::query(
            "INSERT INTO dedup_redirects (source, target) VALUES ($1, $2)
             ON CONFLICT (source) DO UPDATE SET target = excluded.target",
        )
        .bind(source)
        .bind(target)
        .execute(&mut **tx)
        .await?;
    }
    for source in &changes.removed_redirects {
        sqlx::query("DELETE FROM dedup_redirects WHERE source = $1")
            .bind(source)
            .execute(&mut **tx)
            .await?;
    }
    for RedirectError::Cycle { urls } in &changes.new_errors {
        sqlx::query(
            "INSERT INTO dedup_redirect_errors (chain, first_seen_ms) VALUES ($1, $2)
             ON CONFLICT (chain) DO NOTHING",
        )
        .bind(serde_json::to_string(urls).unwrap_or_default())
        .bind(now_ms)
        .execute(&mut **tx)
        .await?;
    }
    for (content, group) in &changes.near {
        sqlx::query(
            "INSERT INTO dedup_near_groups (content_fp, group_id) VALUES ($1, $2)
             ON CONFLICT (content_fp) DO UPDATE SET group_id = excluded.group_id",
        )
        .bind(hash_to_db(*content))
        .bind(hash_to_db(*group))
        .execute(&mut **tx)
        .await?;
    }
    for content in &changes.removed_near {
        sqlx::query("DELETE FROM dedup_near_groups WHERE content_fp = $1")
            .bind(hash_to_db(*content))
            .execute(&mut **tx)
            .await?;
    }
    if let Some(next) = changes.next_group {
        sqlx::query(
            "INSERT INTO dedup_meta (name, value) VALUES ('next_group', $1)
             ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        )
        .bind(hash_to_db(next))
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
