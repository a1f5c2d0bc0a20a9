import Glibc
import Support

/// The built-in page shown before any URL and for `canvas.navigate {"url": ""}`: a full-window 2D
/// canvas sized for devicePixelRatio under a small home panel, exposing `window.__openclaw =
/// {canvas, ctx, setDebugStatusEnabled, setStatus, renderHome}` with the contract of the
/// OpenClawKit scaffold (docs/PROTOCOL.md §7.3), so the docs' `canvas.eval` examples work as
/// written. Loaded as a data: URL: nothing to serve, nothing listening.
enum ScaffoldPage {
    static var url: String { "data:text/html;base64," + Base64.encode(html.utf8) }

    static let html = """
        <!doctype html>
        <html lang="en" data-platform="linux">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>OpenClaw Canvas</title>
        <style>
          :root { --state: #8a8f98; color-scheme: dark; }
          body[data-state="connected"] { --state: #3fb950; }
          body[data-state="connecting"] { --state: #d29922; }
          body[data-state="error"] { --state: #f85149; }
          html, body { margin: 0; height: 100%; background: #0d1117; color: #e6edf3;
                       font: 14px/1.4 system-ui, sans-serif; overflow: hidden; }
          #openclaw-canvas { position: fixed; inset: 0; width: 100vw; height: 100vh; z-index: 1; }
          #openclaw-home { position: fixed; left: 16px; top: 16px; z-index: 2; max-width: 420px; padding: 12px 16px;
                           background: rgba(22, 27, 34, 0.85); border: 1px solid #30363d; border-radius: 10px; }
          #openclaw-home-eyebrow { font-size: 11px; letter-spacing: .08em; text-transform: uppercase; color: #8b949e; }
          #openclaw-home-title { font-size: 18px; font-weight: 600; }
          #openclaw-home-gateway::before { content: "●"; color: var(--state); margin-right: 6px; }
          #openclaw-home-agent-grid { display: flex; flex-wrap: wrap; gap: 6px; margin-top: 8px; }
          .openclaw-agent { padding: 4px 8px; border: 1px solid #30363d; border-radius: 6px; }
          .openclaw-agent[data-active="true"] { border-color: var(--state); }
          #openclaw-status { display: none; position: fixed; inset: auto 16px 16px auto; z-index: 3; pointer-events: none;
                             flex-direction: column; padding: 8px 12px; background: rgba(22, 27, 34, 0.9); border-radius: 8px; }
        </style>
        </head>
        <body data-state="offline">
        <canvas id="openclaw-canvas"></canvas>
        <section id="openclaw-home">
          <div id="openclaw-home-eyebrow">OpenClaw node</div>
          <div id="openclaw-home-title">Canvas</div>
          <div id="openclaw-home-subtitle">Waiting for an agent</div>
          <div><span id="openclaw-home-gateway">Gateway</span> <span id="openclaw-home-gateway-caption"></span></div>
          <div><span id="openclaw-home-active-badge">OC</span> <span id="openclaw-home-active-name">Main</span>
               <span id="openclaw-home-active-caption"></span> · <span id="openclaw-home-agent-count"></span></div>
          <div id="openclaw-home-agent-grid"></div>
          <div id="openclaw-home-footer"></div>
        </section>
        <div id="openclaw-status"><strong id="openclaw-status-title">Ready</strong><span id="openclaw-status-subtitle">Waiting for agent</span></div>
        <script>
        (() => {
          const $ = (id) => document.getElementById(id);
          const params = new URLSearchParams(location.search);
          const platform = (params.get('platform') || '').trim().toLowerCase();
          if (platform) document.documentElement.dataset.platform = platform;
          const canvas = $('openclaw-canvas');
          const ctx = canvas.getContext('2d');
          function resize() {
            const dpr = window.devicePixelRatio || 1;
            canvas.width = Math.max(1, Math.floor(window.innerWidth * dpr));
            canvas.height = Math.max(1, Math.floor(window.innerHeight * dpr));
            ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
          }
          window.addEventListener('resize', resize);
          resize();
          let debugStatus = ['1', 'true', 'yes'].includes((params.get('debugStatus') || params.get('debug') || '').toLowerCase());
          function setDebugStatusEnabled(enabled) {
            debugStatus = !!enabled;
            if (!debugStatus) $('openclaw-status').style.display = 'none';
          }
          function setStatus(title, subtitle) {
            if (!debugStatus) return;
            const el = $('openclaw-status');
            if (!title && !subtitle) { el.style.display = 'none'; return; }
            el.style.display = 'flex';
            if (typeof title === 'string') $('openclaw-status-title').textContent = title;
            if (typeof subtitle === 'string') $('openclaw-status-subtitle').textContent = subtitle;
          }
          function text(id, value, fallback) {
            $(id).textContent = typeof value === 'string' && value ? value : (fallback || '');
          }
          function renderHome(state) {
            if (!state || typeof state !== 'object') return;
            document.body.dataset.state = state.gatewayState || 'offline';
            text('openclaw-home-eyebrow', state.eyebrow, 'OpenClaw node');
            text('openclaw-home-title', state.title, 'Canvas');
            text('openclaw-home-subtitle', state.subtitle, '');
            text('openclaw-home-gateway', state.gatewayLabel, 'Gateway');
            text('openclaw-home-active-badge', state.activeAgentBadge, 'OC');
            text('openclaw-home-active-name', state.activeAgentName, 'Main');
            text('openclaw-home-active-caption', state.activeAgentCaption, '');
            text('openclaw-home-footer', state.footer, '');
            const n = typeof state.agentCount === 'number' ? state.agentCount : (state.agents || []).length;
            const count = n + (n === 1 ? ' agent' : ' agents');
            text('openclaw-home-agent-count', count);
            text('openclaw-home-gateway-caption', state.gatewayState === 'connected' ? count + ' available' : '');
            const grid = $('openclaw-home-agent-grid');
            grid.replaceChildren();
            const agents = Array.isArray(state.agents) ? state.agents : [];
            if (!agents.length) { grid.textContent = 'No agents yet'; return; }
            for (const a of agents) {
              const el = document.createElement('span');
              el.className = 'openclaw-agent';
              el.dataset.active = String(!!a.isActive);
              el.textContent = (a.badge ? a.badge + ' ' : '') + (a.name || a.id || '');
              if (a.caption) el.title = a.caption;
              grid.appendChild(el);
            }
          }
          window.__openclaw = { canvas, ctx, setDebugStatusEnabled, setStatus, renderHome };
        })();
        </script>
        </body>
        </html>
        """
}
