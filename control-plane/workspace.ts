/**
 * Keygate serves one workspace: this is its id wherever Unkey's v1 answers carry a `workspaceId` (getApi, getKey,
 * listKeys). A constant, so that it is stable across restarts, stores and control planes.
 */
export const WORKSPACE_ID = 'ws_keygate'
