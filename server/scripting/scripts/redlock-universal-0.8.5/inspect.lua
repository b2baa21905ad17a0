local value = redis.call("GET", KEYS[1])
-- If key doesn't exist, return nil (becomes null in JS)
if not value then
  return nil
end
local ttl = redis.call("PTTL", KEYS[1])
-- Returns [value, ttl] as array
return {value, ttl}