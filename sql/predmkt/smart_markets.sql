-- The markets as smart_money_flows.sql joins them (query/predmkt_smart_days.go): title,
-- slug and category from predmkt_markets, the first outcome's token from
-- predmkt_tokens. A market on two rows (repeated, or two first-outcome tokens) makes
-- the Go path give way to the SQL.
SELECT m.condition_id, m.question, m.slug, m.category, y.token_id
FROM predmkt_markets m
LEFT JOIN predmkt_tokens y ON y.condition_id = m.condition_id AND y.outcome_index = 0;
