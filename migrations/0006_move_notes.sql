-- Move notes (issue 18): what a pipe engine said about its own moves (an
-- NBoard engine's evaluation, a Gomocup brain's last MESSAGE), as a JSON
-- object from ply number (from 1) to text; NULL when no move has one.
ALTER TABLE games ADD COLUMN move_notes TEXT;
