//! The dedup engine's saves against both stores: only what changed is written, and what is
//! saved loads back as the engine's state.

use super::*;
use crate::dedup::{DedupConfig, DedupEngine, FetchedPage, Hop};

fn page(url: &str, text: &str) -> FetchedPage {
    FetchedPage::html(
        url,
        format!(
            "<html><body><main><p>{text}</p><a href=\"/x\">x</a>\
             <a href=\"http://c.test/elsewhere\">c</a></main></body></html>"
        ),
    )
}

const STORY: &str = "The ferry across the lower crossing carried its first passengers on \
    Saturday after two winters tied up at the boatyard, paid for by a raffle and a swim.";

/// The engine's near class (the tests' pages make one group).
fn near_class(engine: &DedupEngine) -> Option<Class> {
    engine
        .state()
        .classes
        .into_iter()
        .find(|c| c.id.kind == ClassKind::Near)
}

/// Asserts that what `store` holds loads back as `engine`'s state (the database orders keys as
/// signed integers, the engine as unsigned).
async fn assert_saved_as(store: &Store, engine: &DedupEngine) {
    let mut loaded = store.load_dedup_state().await.unwrap();
    loaded.classes.sort_by_key(|c| c.id);
    loaded.near_groups.sort_unstable();
    assert_eq!(loaded, engine.state());
}

async fn save(store: &Store, engine: &mut DedupEngine) -> DedupChanges {
    let changes = engine.take_changes();
    let write = DedupWrite {
        changes: changes.clone(),
        ..Default::default()
    };
    store.save_dedup(Arc::new(write), 1).await.unwrap();
    changes
}

/// Pages of one template (a shop's product pages, one word apart) join one near group
/// one at a time: each join writes what it changed, not the group again, and the saved
/// state stays the engine's.
#[tokio::test]
async fn a_page_joining_a_large_near_group_writes_a_few_rows() {
    let (stores, _dir) =
        crate::store::test_support::stores("a_page_joining_a_large_near_group_writes").await;
    let template = |i: usize| {
        format!(
            "Product {i}. {STORY} {STORY} Shipping is free on every order over twenty                  pounds, returns are accepted within thirty days, and our shop answers mail."
        )
    };
    for store in stores {
        let mut engine = DedupEngine::new(DedupConfig::default());
        let mut last = DedupChanges::default();
        for i in 0..60 {
            let url = format!("http://a.test/p{i}");
            engine.observe(page(&url, &template(i))).unwrap();
            last = save(&store, &mut engine).await;
        }
        let state = engine.state();
        let near_classes = state
            .classes
            .iter()
            .filter(|c| c.id.kind == ClassKind::Near);
        assert_eq!(near_classes.count(), 1, "one group: {:?}", state.classes);
        // The 60th page: its URL, its content class, the near class; its group's entry.
        assert!(last.classes.len() <= 3, "{:?}", last.classes);
        assert!(last.near.len() <= 1, "{:?}", last.near);
        assert!(last.touched.len() <= 8, "{:?}", last.touched);
        // A page outside the near class's places changes its text (still of the template):
        // again a few rows.
        let places = near_class(&engine).expect("the near class").members;
        assert_eq!(places.len(), 4);
        let outside = "http://a.test/p30";
        assert!(places.iter().all(|m| m.url != outside));
        engine
            .observe(page(outside, &format!("{} Now on sale.", template(30))))
            .unwrap();
        let changed = save(&store, &mut engine).await;
        assert!(changed.touched.len() <= 8, "{:?}", changed.touched);
        // A page holding a place leaves the group: the best of the rest takes its place.
        let leaving = places[1].url.clone();
        engine
            .observe(page(&leaving, "Closed for the winter, back in the spring."))
            .unwrap();
        save(&store, &mut engine).await;
        let after = near_class(&engine).expect("the near class").members;
        assert_eq!(after.len(), 4, "{after:?}");
        assert!(after.iter().all(|m| m.url != leaving), "{after:?}");
        assert_saved_as(&store, &engine).await;
        store.close().await;
    }
}

/// A member of a near class that leaves it gives its place to the best of the rest,
/// whichever way it leaves and whatever its URL sorts as: by a 301 elsewhere, or by a
/// change of its text while a mirror still serves its old one (a review found both left
/// the class short once joins stopped touching the whole group).
#[tokio::test]
async fn a_place_left_in_a_near_class_is_taken_by_the_best_of_the_rest() {
    let (stores, _dir) =
        crate::store::test_support::stores("a_place_left_in_a_near_class_is_taken").await;
    let template = |i: usize| format!("Item {i}. {STORY} {STORY} Sold by the crossing's shop.");
    for store in stores {
        let mut engine = DedupEngine::new(DedupConfig::default());
        for i in 1..=8 {
            let url = format!("http://a.test/z{i}");
            engine.observe(page(&url, &template(i))).unwrap();
        }
        // A mirror serves z2's text too: z2's content keeps a user when z2 moves on.
        engine
            .observe(page("http://m.test/z2", &template(2)))
            .unwrap();
        save(&store, &mut engine).await;
        let near = |engine: &DedupEngine| near_class(engine).expect("the near class");
        let members = |engine: &DedupEngine| {
            near(engine)
                .members
                .into_iter()
                .map(|m| m.url)
                .collect::<Vec<_>>()
        };
        assert_eq!(members(&engine).len(), 4);
        // Every member but the canonical leaves in turn, alternately by a 301 elsewhere and
        // by a new text.
        for round in 0..6 {
            let canonical = near(&engine).canonical.expect("a canonical");
            let Some(leaving) = members(&engine).into_iter().rev().find(|u| *u != canonical) else {
                panic!("no member to leave: {:?}", members(&engine));
            };
            if round % 2 == 0 {
                let mut moved = page("http://x.test/sale", "Everything must go, this week only.");
                moved.url = leaving.clone();
                moved.redirect_chain = vec![Hop {
                    url: leaving.clone(),
                    status: 301,
                }];
                engine.observe(moved).unwrap();
            } else {
                let text = format!("Closed for the winter, round {round}; back in the spring.");
                engine.observe(page(&leaving, &text)).unwrap();
            }
            save(&store, &mut engine).await;
            let now = members(&engine);
            assert!(!now.contains(&leaving), "{leaving} left: {now:?}");
            let left_in_group = 9 - (round + 1);
            assert_eq!(now.len(), left_in_group.min(4), "round {round}: {now:?}");
        }
        assert_saved_as(&store, &engine).await;
        store.close().await;
    }
}

#[tokio::test]
async fn saved_changes_load_back_as_the_same_state() {
    let (stores, _dir) =
        crate::store::test_support::stores("saved_changes_load_back_as_the_same_state").await;
    for store in stores {
        let mut engine = DedupEngine::new(DedupConfig::default());
        engine.observe(page("http://a.test/1", STORY)).unwrap();
        engine.observe(page("http://b.test/1", STORY)).unwrap();
        let cycle = [("http://a.test/x", 301), ("http://a.test/y", 301)].map(|(u, s)| Hop {
            url: u.into(),
            status: s,
        });
        engine
            .observe_redirects("http://a.test/x", &cycle, "http://a.test/x")
            .unwrap();
        let first = save(&store, &mut engine).await;
        assert!(!first.classes.is_empty() && first.new_errors.len() == 1);
        // The sketch and the links to other hosts (migration 0011) are saved too.
        let state = engine.state();
        assert!(state.urls.iter().any(|u| u.sketch.is_some()));
        assert!(state.urls.iter().any(|u| !u.external_out_links.is_empty()));
        assert_eq!(store.load_dedup_state().await.unwrap(), state);

        // Only what changed is written the second time; a moved page leaves its class.
        assert!(save(&store, &mut engine).await.is_empty());
        engine
            .observe(page("http://b.test/1", "Something else entirely now."))
            .unwrap();
        let second = save(&store, &mut engine).await;
        assert!(second.touched.contains("http://a.test/1"), "{second:?}");
        assert!(second.urls.len() < engine.state().urls.len());
        let loaded = store.load_dedup_state().await.unwrap();
        assert_eq!(loaded, engine.state());
        let reloaded = DedupEngine::from_state(DedupConfig::default(), loaded);
        assert_eq!(reloaded.redirect_errors().len(), 1);
        assert!(store.duplicate_classes(false).await.unwrap().is_empty());
        assert_eq!(store.redirect_cycles().await.unwrap().len(), 1);
    }
}

/// A chain of permanent redirects files every source under the final target, as explain says.
#[tokio::test]
async fn permanent_redirects_are_grouped_by_their_final_target() {
    let (stores, _dir) =
        crate::store::test_support::stores("permanent_redirects_by_final_target").await;
    for store in stores {
        let mut engine = DedupEngine::new(DedupConfig::default());
        let chain = [("http://a.test/chain", 301), ("http://a.test/old", 308)].map(|(u, s)| Hop {
            url: u.into(),
            status: s,
        });
        engine
            .observe_redirects("http://a.test/chain", &chain, "http://a.test/page")
            .unwrap();
        save(&store, &mut engine).await;
        assert_eq!(
            store.permanent_redirects_by_target().await.unwrap(),
            [(
                "http://a.test/page".to_string(),
                vec![
                    "http://a.test/chain".to_string(),
                    "http://a.test/old".to_string()
                ]
            )]
        );
    }
}
