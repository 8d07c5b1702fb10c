// toolkit preview's host: renders one tool's MCP App as a host does (specification/2026-01-26/apps.mdx), with the
// official AppBridge (McpApps.AppBridge, from ext-apps.js). The page's server is reached through POST /rpc, which
// answers tools/list, tools/call, resources/list and resources/read from the server being previewed.
(function () {
  "use strict";
  const config = JSON.parse(document.getElementById("preview-config").textContent);
  const logList = document.getElementById("log");
  const frame = document.getElementById("frame");

  function log(kind, text) {
    const item = document.createElement("li");
    item.className = kind;
    item.textContent = text;
    logList.appendChild(item);
  }

  function short(value) {
    const text = JSON.stringify(value);
    return text.length > 300 ? text.slice(0, 300) + "..." : text;
  }

  async function rpc(method, params) {
    const response = await fetch("/rpc", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ method: method, params: params || {} }),
    });
    const body = await response.json();
    if (body.error) {
      const error = new Error(body.error.message);
      error.code = body.error.code;
      throw error;
    }
    return body.result;
  }

  // The CSP a host builds from the page's _meta.ui.csp (the spec's "CSP Construction from Metadata"); the restrictive
  // default when the page declares nothing. A meta tag, as the page is given to the iframe as srcdoc.
  function policy(csp) {
    const list = (key) => ((csp && csp[key]) || []).join(" ");
    const resources = list("resourceDomains");
    return [
      "default-src 'none'",
      `script-src 'self' 'unsafe-inline' ${resources}`,
      `style-src 'self' 'unsafe-inline' ${resources}`,
      `connect-src 'self' ${list("connectDomains")}`,
      `img-src 'self' data: ${resources}`,
      `font-src 'self' ${resources}`,
      `media-src 'self' data: ${resources}`,
      `frame-src ${list("frameDomains") || "'none'"}`,
      "object-src 'none'",
      `base-uri ${list("baseUriDomains") || "'self'"}`,
    ].join("; ");
  }

  function withPolicy(html, csp) {
    const meta = `<meta http-equiv="Content-Security-Policy" content="${policy(csp).replace(/"/g, "&quot;")}">`;
    const head = /<head[^>]*>/i.exec(html);
    if (head) return html.slice(0, head.index + head[0].length) + meta + html.slice(head.index + head[0].length);
    return meta + html;
  }

  async function render() {
    const { tools } = await rpc("tools/list");
    const tool = tools.find((t) => t.name === config.tool);
    if (!tool) throw new Error(`no tool named ${config.tool}`);
    const uri = tool._meta && tool._meta.ui && tool._meta.ui.resourceUri;
    if (!uri) throw new Error(`the tool ${config.tool} has no MCP App (no _meta.ui.resourceUri)`);
    const { contents } = await rpc("resources/read", { uri: uri });
    const page = contents[0];
    const ui = (page._meta && page._meta.ui) || {};
    log("host", `resources/read ${uri}: ${page.text.length} characters, _meta.ui ${short(ui)}`);

    const bridge = new McpApps.AppBridge(
      null,
      { name: "toolkit preview", version: config.version },
      { openLinks: {}, serverTools: {}, serverResources: {}, logging: {}, updateModelContext: {}, message: {} },
      { hostContext: { theme: "light", platform: "web", displayMode: "inline", availableDisplayModes: ["inline"] } },
    );
    bridge.oncalltool = async (params) => {
      log("app", `tools/call ${params.name} ${short(params.arguments || {})}`);
      const result = await rpc("tools/call", params);
      log("server", `${params.name} answered ${short(result.structuredContent || result.content)}`);
      return result;
    };
    bridge.onreadresource = (params) => rpc("resources/read", params);
    bridge.onlistresources = (params) => rpc("resources/list", params);
    bridge.onopenlink = async ({ url }) => {
      log("app", `ui/open-link ${url}`);
      window.open(url, "_blank", "noopener");
      return {};
    };
    bridge.onmessage = async (params) => {
      log("app", `ui/message ${short(params.content)}`);
      return {};
    };
    bridge.onupdatemodelcontext = async (params) => {
      log("app", `ui/update-model-context ${short(params)}`);
      return {};
    };
    bridge.onloggingmessage = (params) => log("app", `log [${params.level}] ${short(params.data)}`);
    bridge.onsizechange = ({ height }) => {
      if (height) frame.style.height = `${Math.ceil(height)}px`;
    };
    bridge.oninitialized = async () => {
      log("host", "ui/notifications/initialized: sending the tool's input, then calling it");
      await bridge.sendToolInput({ arguments: config.arguments });
      const result = await rpc("tools/call", { name: config.tool, arguments: config.arguments });
      log("server", `${config.tool} answered ${short(result.structuredContent || result.content)}`);
      await bridge.sendToolResult(result);
    };

    // No allow-same-origin: the page gets an opaque origin of its own, apart from this host page (the spec's
    // "Iframe Sandboxing"); the permissions it asked for become the iframe's `allow`.
    frame.setAttribute("sandbox", "allow-scripts allow-forms");
    const allow = McpApps.buildAllowAttribute(ui.permissions);
    if (allow) frame.setAttribute("allow", allow);
    frame.classList.toggle("bordered", ui.prefersBorder !== false);
    frame.srcdoc = withPolicy(page.text, ui.csp);
    await bridge.connect(new McpApps.PostMessageTransport(frame.contentWindow, frame.contentWindow));
  }

  render().catch((error) => log("error", String(error && error.message ? error.message : error)));

  // Reload when the server's file or a page changes (the preview watches them).
  const events = new EventSource("/events");
  events.onmessage = (event) => {
    if (event.data === "reload") location.reload();
  };
})();
