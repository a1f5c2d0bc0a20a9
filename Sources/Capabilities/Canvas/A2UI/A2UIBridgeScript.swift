/// Installed in every document the canvas loads (Page.addScriptToEvaluateOnNewDocument): the
/// Android-style `openclawCanvasA2UIAction.postMessage(string)` handler that the gateway's
/// injected canvas script and the A2UI renderer look for, forwarding to the DevTools binding.
/// Objects are stringified, as the mobile hosts expect a JSON string.
enum A2UIBridgeScript {
    static let source = """
        (() => {
          const binding = globalThis.\(CanvasBrowser.bindingName);
          if (typeof binding !== 'function') return;
          const postMessage = (message) => {
            try { binding(typeof message === 'string' ? message : JSON.stringify(message)); } catch (e) {}
          };
          Object.defineProperty(globalThis, 'openclawCanvasA2UIAction', {
            value: Object.freeze({ postMessage }), configurable: false, writable: false,
          });
        })();
        """
}
