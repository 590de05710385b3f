-- Argo CD health of an echoperator object, from its status alone: not yet observed (or a spec
-- change not yet observed) is Progressing; Stalled=True (refused for good) is Degraded;
-- Reconciling=True is Progressing; otherwise the Ready condition decides.
hs = {}
if obj.status == nil or obj.status.observedGeneration == nil
    or obj.status.observedGeneration < obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe generation " .. obj.metadata.generation
  return hs
end
local ready, reconciling, stalled
for _, c in ipairs(obj.status.conditions or {}) do
  if c.type == "Ready" then ready = c end
  if c.type == "Reconciling" and c.status == "True" then reconciling = c end
  if c.type == "Stalled" and c.status == "True" then stalled = c end
end
if stalled ~= nil then
  hs.status = "Degraded"
  hs.message = stalled.message
elseif reconciling ~= nil then
  hs.status = "Progressing"
  hs.message = reconciling.message
elseif ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message
elseif ready ~= nil and ready.status == "False" then
  hs.status = "Degraded"
  hs.message = ready.message
else
  hs.status = "Progressing"
  hs.message = "Waiting for the Ready condition"
end
return hs
