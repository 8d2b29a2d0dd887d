//! Pages named as sitemaps across workers (migration 0030): a walk that meets, on a host another
//! worker holds, a URL stored as a page that its index or robots.txt names as a sitemap cannot
//! read it, and the page's row keeps what listed it first; it leaves a name here, which the
//! holder's next discovery pass reads (the page is read to learn whether it is a sitemap) and
//! deletes once it has.

use super::Store;

/// A page of a site that an index or a robots.txt on a host held elsewhere named as a sitemap.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct PageNamedASitemap {
    /// The page's row.
    pub url_id: i64,
    /// The page's URL.
    pub url: String,
    /// What named it a sitemap (the index's or the robots.txt's URL).
    pub named_by: String,
    /// Its row's kind now (a page, unless made another kind since).
    pub kind: String,
}

impl Store {
    /// Records that `named_by` names the page of row `url_id` as a sitemap (the last naming
    /// stands).
    pub async fn name_page_a_sitemap(
        &self,
        url_id: i64,
        named_by: &str,
        now_ms: i64,
    ) -> sqlx::Result<()> {
        let named_by = named_by.to_string();
        self.write("name_page_a_sitemap", move |mut tx| {
            let named_by = named_by.clone();
            async move {
                sqlx::query(
                "INSERT INTO page_sitemap_names (url_id, named_by, named_ms) VALUES ($1, $2, $3)
                 ON CONFLICT (url_id) DO UPDATE SET named_by = excluded.named_by,
                     named_ms = excluded.named_ms",
            )
            .bind(url_id)
            .bind(&named_by)
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
                Ok((tx, ()))
            }
        })
        .await
    }

    /// The pages of site `site_id` named as sitemaps, by row id (with their rows' kinds now).
    pub async fn pages_named_sitemaps(&self, site_id: i64) -> sqlx::Result<Vec<PageNamedASitemap>> {
        sqlx::query_as(
            "SELECT n.url_id, u.url, n.named_by, u.kind FROM page_sitemap_names n
             JOIN urls u ON u.id = n.url_id
             WHERE u.site_id = $1 ORDER BY n.url_id",
        )
        .bind(site_id)
        .fetch_all(self.reader())
        .await
    }

    /// Forgets the naming of row `url_id` (read since, or no page any more).
    pub async fn unname_page(&self, url_id: i64) -> sqlx::Result<()> {
        self.write("unname_page", move |mut tx| async move {
            sqlx::query("DELETE FROM page_sitemap_names WHERE url_id = $1")
                .bind(url_id)
                .execute(&mut *tx)
                .await?;
            Ok((tx, ()))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::discovered::Discovered;
    use crate::store::test_support::{execute, page, site_and_host, stores};

    #[tokio::test]
    async fn a_naming_is_listed_with_its_rows_kind_until_it_is_forgotten() {
        let (stores, _dir) = stores("a_naming_is_listed_while_its_row_is_a_page").await;
        for store in stores {
            let (site_id, host_id) = site_and_host(&store).await;
            let urls = ["http://a.test/s.txt", "http://a.test/b", "http://a.test/x"];
            let found: Vec<Discovered> = urls.iter().map(|u| page(u, site_id, host_id)).collect();
            store.upsert_discovered(&found, 0).await.unwrap();
            let mut ids = Vec::new();
            for url in urls {
                ids.push(store.url_row(url).await.unwrap().expect("its row").id);
            }
            store
                .name_page_a_sitemap(ids[0], "http://b.test/i.xml", 1)
                .await
                .unwrap();
            store
                .name_page_a_sitemap(ids[1], "http://b.test/i.xml", 1)
                .await
                .unwrap();
            // The last naming stands.
            store
                .name_page_a_sitemap(ids[1], "http://b.test/robots.txt", 2)
                .await
                .unwrap();
            let named = |id: i64, url: &str, by: &str, kind: &str| PageNamedASitemap {
                url_id: id,
                url: url.into(),
                named_by: by.into(),
                kind: kind.into(),
            };
            assert_eq!(
                store.pages_named_sitemaps(site_id).await.unwrap(),
                [
                    named(ids[0], urls[0], "http://b.test/i.xml", "page"),
                    named(ids[1], urls[1], "http://b.test/robots.txt", "page"),
                ]
            );
            assert!(
                store
                    .pages_named_sitemaps(site_id + 1)
                    .await
                    .unwrap()
                    .is_empty()
            );
            // A row no longer a page says so; a naming forgotten is gone.
            execute(
                &store,
                "UPDATE urls SET kind = 'sitemap' WHERE id = $1",
                &ids[..1],
            )
            .await;
            store.unname_page(ids[1]).await.unwrap();
            assert_eq!(
                store.pages_named_sitemaps(site_id).await.unwrap(),
                [named(ids[0], urls[0], "http://b.test/i.xml", "sitemap")]
            );
            store.close().await;
        }
    }
}
