-- A session never refuses its own continuation (issue 21): turns sent to a closed session reopen it, and the
-- next close extracts only what came after the previous one (a new segment of the same session). What each
-- close extracted (units, its summary block) stays valid; the session keeps one id, one turn sequence.
--   closed_through: the turns (by seq) that earlier closes have extracted; the next close reads seq > it.
--   segments:       how many closes the session has had.
ALTER TABLE memvault.session
    ADD COLUMN closed_through integer NOT NULL DEFAULT 0 CHECK (closed_through >= 0),
    ADD COLUMN segments integer NOT NULL DEFAULT 0 CHECK (segments >= 0);

UPDATE memvault.session SET closed_through = turn_count, segments = 1 WHERE closed_at IS NOT NULL;
