-- Class rosters (issue 37): a participant's student number (学籍番号) from the
-- roster, shown and exported beside the name; '' when none. A participant the
-- admin removed is deactivated, not deleted: their engines and games stay.
ALTER TABLE participants ADD COLUMN number TEXT NOT NULL DEFAULT '';
ALTER TABLE participants ADD COLUMN deactivated_at INTEGER; -- unix ms; NULL: active

-- A game lost by a timeout that followed a refused move (cause after_refused):
-- the move the rules refused and why, JSON {"color", "move", "why"}.
ALTER TABLE games ADD COLUMN refused TEXT;
