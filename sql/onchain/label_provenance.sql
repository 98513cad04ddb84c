-- OnchainLabelProvenance lists every source's label row for one address in cascade
-- order (priority 1 first); the first row is the label the cascade resolves to. Only
-- rows observed at or before the clock count (a row without observed_at always does).
-- $1 address, $2 the clock.
SELECT l.source, s.name, s.kind, s.priority, s.url, l.entity, l.wallet_type, l.confidence,
       coalesce(l.risk_flag, ''), l.observed_at
FROM onchain_labels l JOIN onchain_label_sources s USING (source)
WHERE l.address = $1 AND (l.observed_at IS NULL OR l.observed_at <= $2::TIMESTAMP)
ORDER BY s.priority, l.source;
