-- Lua 5.4 (with liblua5.4-0-dbg: dwz-compressed DWARF) sorting with a Lua comparator,
-- rewriting strings and recursing: tests/test_real_o2.py samples it.
local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end
local t = {}
for i = 1, 200000 do t[i] = (i * 7919) % 100003 end
while true do
  table.sort(t, function(a, b) return a > b end)
  local s = string.rep("ab", 1000):gsub("a", "c")
  fib(22)
end
