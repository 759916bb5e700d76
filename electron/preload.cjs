// Preload (sandboxed: CommonJS, only `electron` may be required). It exposes exactly two
// functions to the page — call a site API method (with the page's input age, see
// core/site/api.ts InputAge; the page's error report, `reportClientError`, goes the same way and
// main answers it itself), and subscribe to pushed events — and nothing of Electron or node. The channel names are those of electron/ipc.ts.
'use strict';
const { contextBridge, ipcRenderer } = require('electron');

const CALL_CHANNEL = 'tilstand:call';
const EVENT_CHANNEL = 'tilstand:event';

contextBridge.exposeInMainWorld('tilstand', {
  call: (method, request, inputAge) => ipcRenderer.invoke(CALL_CHANNEL, String(method), request, inputAge),
  subscribe: (listener) => {
    const wrapped = (_event, payload) => listener(payload);
    ipcRenderer.on(EVENT_CHANNEL, wrapped);
    return () => ipcRenderer.removeListener(EVENT_CHANNEL, wrapped);
  },
});
