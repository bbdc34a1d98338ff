-- SQLite sample: a recursive CTE counting to a large number (minutes of work).
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000)
SELECT sum(x % 7) FROM c;
