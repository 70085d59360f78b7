-- memloom schema 5: tenant isolation in the database (row-level security).
-- Every client sets the namespace it works in, once per session, before anything else:
--     SELECT set_config('memloom.namespace', 'team-a', false);
-- (the npm store at open, the edge worker on each request's connection). From then on the
-- pool tables show and accept only that namespace's rows, whatever the SQL says: a query that
-- forgets `WHERE namespace = ...` (or names another namespace) reads, updates and deletes
-- nothing of anyone else's, and an INSERT or UPDATE that would write another namespace's row
-- fails (new row violates row-level security policy). No setting: no rows at all.
--
-- Who is bound: FORCE makes the policies apply to the tables' owner too. Superusers and roles
-- with BYPASSRLS are never bound (PostgreSQL's rule): the embedded PGlite store runs as its
-- superuser, so there the policies are inert (one process, one user: nothing to isolate), and
-- a server should give clients a role without either (see docs/RELIABILITY.md). A migration
-- that rewrites rows of every namespace must run as such a role.
--
-- memloom_mentions has no namespace column: a mention is visible when its item is (the item's
-- own policy applies inside the subquery), and may be written only between an item and an
-- entity both visible, so an edge never crosses namespaces.

CREATE FUNCTION memloom_current_namespace() RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$ SELECT nullif(current_setting('memloom.namespace', true), '') $$;
COMMENT ON FUNCTION memloom_current_namespace() IS
'the namespace this session works in (the memloom.namespace setting), NULL when unset; the row-level security policies of the pool tables compare against it';

ALTER TABLE memloom_items ENABLE ROW LEVEL SECURITY;
ALTER TABLE memloom_items FORCE ROW LEVEL SECURITY;
CREATE POLICY memloom_items_namespace ON memloom_items
    USING (namespace = memloom_current_namespace())
    WITH CHECK (namespace = memloom_current_namespace());
COMMENT ON POLICY memloom_items_namespace ON memloom_items IS
'a session sees and writes only the rows of its memloom.namespace';

ALTER TABLE memloom_entities ENABLE ROW LEVEL SECURITY;
ALTER TABLE memloom_entities FORCE ROW LEVEL SECURITY;
CREATE POLICY memloom_entities_namespace ON memloom_entities
    USING (namespace = memloom_current_namespace())
    WITH CHECK (namespace = memloom_current_namespace());
COMMENT ON POLICY memloom_entities_namespace ON memloom_entities IS
'a session sees and writes only the entities of its memloom.namespace';

ALTER TABLE memloom_mentions ENABLE ROW LEVEL SECURITY;
ALTER TABLE memloom_mentions FORCE ROW LEVEL SECURITY;
CREATE POLICY memloom_mentions_namespace ON memloom_mentions
    USING (EXISTS (SELECT 1 FROM memloom_items i WHERE i.id = item_id))
    WITH CHECK (EXISTS (SELECT 1 FROM memloom_items i WHERE i.id = item_id)
                AND EXISTS (SELECT 1 FROM memloom_entities e WHERE e.id = entity_id));
COMMENT ON POLICY memloom_mentions_namespace ON memloom_mentions IS
'a mention is visible when its item is, and may link only an item and an entity of the session''s namespace';

UPDATE memloom_meta SET schema_version = greatest(schema_version, 5);
