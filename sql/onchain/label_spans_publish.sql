-- publishLabelSpans: the label cascade as it stood at every time, written whole to
-- onchain_label_spans when onchain_labels or onchain_label_sources changed: per
-- address, the spans [valid_from, valid_until) during which one source's row was the
-- cascade's pick (the row of the lowest priority number, then source, among the rows
-- observed by then). A row observed later that outranks the pick starts a new span;
-- one that does not never shows. valid_until is NULL on the span still current;
-- valid_from is NULL for a row without observed_at (known always). Readers pick the
-- span holding their clock (onchain_labels_at, labels_at.sql), so no label observed
-- after the clock is ever shown.
WITH r AS (
    SELECT l.address, l.entity, l.wallet_type, l.confidence, coalesce(l.risk_flag, '') AS risk_flag, l.source,
           l.wallet_type IN ('cex', 'dex', 'defi', 'market_maker', 'bridge') AS venue,
           coalesce(l.observed_at, '-infinity'::TIMESTAMP) AS observed_at,
           row_number() OVER (PARTITION BY l.address ORDER BY s.priority, l.source) AS rk
    FROM onchain_labels l JOIN onchain_label_sources s USING (source)
), best AS (
    -- best_before: the best rank among the rows observed before this one (at the same
    -- instant, the better rank comes first, so only the best of the instant starts a span).
    SELECT *, min(rk) OVER (PARTITION BY address ORDER BY observed_at, rk
                            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS best_before
    FROM r
), picks AS (
    SELECT * FROM best WHERE best_before IS NULL OR rk < best_before
)
SELECT address, entity, wallet_type, confidence, risk_flag, source, venue,
       CASE WHEN isfinite(observed_at) THEN observed_at END AS valid_from,
       lead(observed_at) OVER (PARTITION BY address ORDER BY observed_at) AS valid_until
FROM picks
