-- onchain_labels_at(t): the label cascade as it stood at t (one row per labelled
-- address: the pick among the rows observed at or before t), from the published spans
-- of onchain_label_spans (label_spans_publish.sql). Every query that shows a label
-- reads it through this macro with its own clock bound as t.
CREATE OR REPLACE MACRO onchain_labels_at(t) AS TABLE
SELECT address, entity, wallet_type, confidence, risk_flag, source, venue
FROM onchain_label_spans
WHERE (valid_from IS NULL OR valid_from <= t) AND (valid_until IS NULL OR valid_until > t);
