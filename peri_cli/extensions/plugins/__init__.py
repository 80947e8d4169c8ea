"""Claude Code's plugins: bundles of commands, agents, skills, hooks and MCP servers, published in
marketplaces (`.claude-plugin/marketplace.json`) and installed as copies under
`$PERI_HOME/plugins/`.

`manifest` reads the marketplace and plugin files (untrusted input); `parts` what one installed
plugin brings; `fingerprint` what in it runs code (an update that changes it asks again);
`registry` the files under `$PERI_HOME/plugins/`; `install` adding marketplaces and staging,
committing and removing plugins; `active` which plugins the settings switch on (a workspace's
only once trusted); `offers` the plugins a trusted project enables that are not installed."""
