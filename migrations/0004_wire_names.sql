-- The names as the opponent's protocol sent them, where it had to change
-- them (issue 16, item 3: othello-move sends "6321120" as "n6321120", "WHITE"
-- as "WHITE_"); NULL where a name went as registered.
ALTER TABLE games ADD COLUMN black_wire_name TEXT;
ALTER TABLE games ADD COLUMN white_wire_name TEXT;
