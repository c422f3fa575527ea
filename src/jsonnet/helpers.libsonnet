// `std.extVar('helpers')`: the functions Windsor gives its Jsonnet files, with the same names,
// arguments, defaults and error texts, so those files evaluate unchanged.
{
  // A value by dotted path (`a.b.c`) through objects; `default` where the path stops.
  local walk(value, keys) =
    if std.length(keys) == 0 then value
    else if std.type(value) == 'object' && keys[0] in value then walk(value[keys[0]], keys[1:])
    else null,

  local expected(kind, path, value) =
    error 'Expected ' + kind + " for '" + path + "' but got " + std.type(value) + ': ' + std.toString(value),

  // A set value of one Jsonnet type, the default when unset, an error for any other type.
  local typed(helpers, kind, obj, path, default, convert=function(v) v) =
    local value = helpers.get(obj, path, null);
    if value == null then default
    else if std.type(value) == kind then convert(value)
    else expected(kind, path, value),

  // A one-segment path returns the field even when it holds null (as Windsor does).
  get(obj, path, default=null)::
    if std.length(std.findSubstr('.', path)) == 0 then
      (if std.type(obj) == 'object' && path in obj then obj[path] else default)
    else
      local found = walk(obj, std.split(path, '.'));
      if found == null then default else found,

  getString(obj, path, default='')::
    typed(self, 'string', obj, path, default),
  getInt(obj, path, default=0)::
    typed(self, 'number', obj, path, default, std.floor),
  getNumber(obj, path, default=0)::
    typed(self, 'number', obj, path, default),
  getBool(obj, path, default=false)::
    typed(self, 'boolean', obj, path, default),
  getObject(obj, path, default={})::
    typed(self, 'object', obj, path, default),
  getArray(obj, path, default=[])::
    typed(self, 'array', obj, path, default),
  has(obj, path)::
    self.get(obj, path, null) != null,

  // The host of an endpoint: without `https://` or `http://`, and without what follows a `:`.
  baseUrl(endpoint)::
    local host =
      if std.startsWith(endpoint, 'https://') then std.substr(endpoint, 8, std.length(endpoint) - 8)
      else if std.startsWith(endpoint, 'http://') then std.substr(endpoint, 7, std.length(endpoint) - 7)
      else endpoint;
    local colons = std.findSubstr(':', host);
    if endpoint == '' then ''
    else if std.length(colons) == 0 then host
    else std.substr(host, 0, colons[0]),

  // Drops nulls, empty strings, and objects and arrays that are empty once cleaned, at any depth.
  removeEmptyKeys(obj)::
    local empty(v) =
      v == null || v == '' || (std.member(['object', 'array'], std.type(v)) && std.length(v) == 0);
    local clean(v) =
      if std.type(v) == 'object' then
        local cleaned = { [k]: clean(v[k]) for k in std.objectFields(v) };
        { [k]: cleaned[k] for k in std.objectFields(cleaned) if !empty(cleaned[k]) }
      else if std.type(v) == 'array' then
        [e for e in std.map(clean, v) if !empty(e)]
      else v;
    clean(obj),
}
