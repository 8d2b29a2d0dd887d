//! How often a feed is read, and whether its pages wait for it: a feed priced against the age
//! it cuts, within the plan ([`super::replan`] asks it of each feed as it solves a site).
//!
//! A page a feed covers waits for its announcements instead of being fetched blindly
//! ([`crate::plan::feed`] gives what such a page costs in age and visits, exactly). A feed is
//! priced at the margin of the plan without it: the poll rate that minimises its polls plus its
//! pages' age and visits at the plan's multiplier `μ` (age cut per visit a day), kept only if
//! that is below what its pages cost on the plan alone ([`plan::price_feed`]); otherwise it is
//! read rarely, weekly, to go on learning which pages it lists, or monthly once learning cannot
//! make it worth reading (it overflows at its most polls, or its pages gain less from it than
//! keeping up with them costs, [`plan::feed_could_pay`]). The polls are paid out of the budget and
//! the host's limit, and the visits the covered pages save go back to them.

use crate::clock::MS_PER_DAY;
use crate::plan;

use super::site_pages::SitePages;
use super::{AUDIT_INTERVALS, Scheduler, UrlKey};

/// The most a feed is read per day, and the largest share of its host's limit it may take.
const MAX_FEED_POLLS: f64 = 96.0;
const FEED_HOST_SHARE: f64 = 0.25;
/// How often a feed is read when it is not worth more: weekly, to go on learning which pages it
/// lists (read 4 times a day, such feeds cost 1% of a tight budget and left freshet worse off
/// with signals than without; read monthly, they learnt their pages too slowly to become worth
/// reading: `--hosts 200 --budget 0.2 --signals 0.2` went from 1.003 to 1.014 × the oracle).
const MIN_FEED_POLLS: f64 = 1.0 / 7.0;
/// How often a feed is read when learning more of its pages cannot make it worth reading:
/// monthly. That is when it would overflow even at the most polls it may take (more pages only
/// add to its changes, so it will never fit), and when the [`FEED_SAMPLE`] pages or more it
/// covers would not gain from it what keeping up with their changes costs, however many such
/// pages it came to cover ([`plan::feed_could_pay`]). In a web whose pages change faster than
/// 20 entries hold (`--median-rate 2 --rate-sigma 2 --signals 0.2`, seeds 1-3), the second rule
/// cut the feed reads of the 60 days measured from about 700 to about 270; the mean age moved
/// less than between seeds.
const FUTILE_FEED_POLLS: f64 = 1.0 / 30.0;
/// The fewest covered pages (visited by the plan and changing) on which a feed is judged futile
/// by what they would gain.
const FEED_SAMPLE: usize = 5;
impl Scheduler {
    /// A feed's polls per day and whether its pages should wait for it (see the module docs).
    pub(super) fn feed_polls(
        &self,
        feed: UrlKey,
        pages: &SitePages,
        rates: &[f64],
        multipliers: &plan::Multipliers,
        host: usize,
    ) -> (f64, bool) {
        let host_key = self.urls[feed].host();
        let cap = MAX_FEED_POLLS
            .min(FEED_HOST_SHARE * self.host_limit_per_day(host_key))
            .max(MIN_FEED_POLLS.min(self.host_limit_per_day(host_key)));
        // Never more often than its floor (its `ttl`, the server's) lets it be read: the
        // reads it would not get are no budget set aside, nor a cadence its pages count on.
        let floor_ms = self.urls[feed].min_interval_ms();
        let cap = match floor_ms > 0 {
            true => cap.min(MS_PER_DAY / floor_ms as f64),
            false => cap,
        };
        let rarely = MIN_FEED_POLLS.min(cap);
        // Not read here yet, or answered unchanged since (a 304: it lists what it listed then):
        // read as the run before planned it, never more rarely than weekly, and never more
        // rarely while the pages restored as waiting for it price it lower (its row may keep
        // nothing of its capacity, and a feed of two entries priced forty daily pages as
        // futile: read monthly).
        let before = (self.urls[feed].feed().planned_before_start)
            .map(|per_day| per_day.max(rarely).min(cap));
        let (polls, worth) = self.feed_polls_priced(feed, pages, rates, multipliers, host, cap);
        (polls.max(before.unwrap_or(0.0)), worth)
    }

    /// [`Self::feed_polls`] by what the feed covers and has shown alone, under its `cap`.
    fn feed_polls_priced(
        &self,
        feed: UrlKey,
        pages: &SitePages,
        rates: &[f64],
        multipliers: &plan::Multipliers,
        host: usize,
        cap: f64,
    ) -> (f64, bool) {
        let rarely = MIN_FEED_POLLS.min(cap);
        let covers = &self.urls[feed].feed().covers;
        if covers.is_empty() {
            return (rarely, false);
        }
        // The site's pages are listed in key order: a covered page is found by bisection, where
        // a map of every page of the site, made for each feed, cost a site of a million pages
        // some 35 MB and the time to fill it, for each of its feeds.
        let covered: Vec<plan::CoveredPage> = covers
            .iter()
            .filter_map(|&page| pages.find(page))
            .map(|(run, page)| plan::CoveredPage {
                weight: page.weight,
                rate_per_day: page.rate_per_day,
                visits_per_day: rates[run],
            })
            .collect();
        // Often enough that a poll finds the feed at most half full of new entries; a feed that
        // cannot be read that often is read monthly (learning more of its pages would only add
        // to its changes), and no page waits for it.
        // Of its entries, the site's pages take their share (the rest are other hosts' pages,
        // whose changes fill it too).
        // A feed that may list each page once, at its latest change, fills with the pages that
        // changed, not with their changes (plan::polls_to_keep_up).
        let page_rates: Vec<f64> = covered.iter().map(|p| p.rate_per_day).collect();
        let shown = &self.urls[feed].feed().shown;
        let capacity = (shown.most_entries as f64 * shown.own_share()).max(2.0);
        let no_overflow =
            plan::polls_to_keep_up(&page_rates, 0.5 * capacity, shown.lists_every_change);
        if no_overflow > cap {
            return (FUTILE_FEED_POLLS.min(cap), false);
        }
        let price = plan::price_feed(
            &covered,
            multipliers.effective(host),
            no_overflow.max(rarely),
            cap,
            AUDIT_INTERVALS,
        );
        if price.worth {
            (price.polls_per_day, true)
        } else if !plan::feed_could_pay(
            &covered,
            multipliers.effective(host),
            cap,
            0.5 * capacity,
            AUDIT_INTERVALS,
            FEED_SAMPLE,
        ) {
            (FUTILE_FEED_POLLS.min(cap), false)
        } else {
            (rarely, false)
        }
    }
}
