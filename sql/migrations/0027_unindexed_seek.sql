-- memloom schema 27: memloom_unindexed reads only the marks above its after_id. The index run
-- pages through the unindexed items in id order (after_id: the last id of the batch before);
-- the anti-join against memloom_indexed (sql/0024) started its merge at the first mark on every
-- call, so each batch read every mark below after_id: 149,998 marks and 12.6 ms for one batch
-- halfway through a first index run of 300,000 items (PostgreSQL 15), 0.16 ms with the marks'
-- index scan starting at after_id. Over a whole run that was quadratic in the namespace's size.
-- The same rows. No table changes.

CREATE OR REPLACE FUNCTION memloom_unindexed(ns text, after_id bigint, lim integer)
RETURNS TABLE (id bigint, breadcrumb text, content text, content_hash text)
LANGUAGE sql STABLE AS $$
    -- x.item_id > after_id says again what x.item_id = i.id implies: without it the anti-join
    -- read every mark below after_id on each call (a merge join from the first mark), so an
    -- index run of N items read N^2 / (2 x batch) marks (sql/0027).
    SELECT i.id, i.breadcrumb, i.content, i.content_hash
      FROM memloom_items i
     WHERE i.namespace = ns AND i.status = 'active' AND i.id > after_id
       AND NOT EXISTS (SELECT 1 FROM memloom_indexed x WHERE x.item_id = i.id AND x.item_id > after_id)
     ORDER BY i.id
     LIMIT lim
$$;
COMMENT ON FUNCTION memloom_unindexed(text, bigint, integer) IS
'the next at most lim active items of namespace ns not indexed yet with an id above after_id, in id order (an index run''s batches)';

UPDATE memloom_meta SET schema_version = greatest(schema_version, 27);
