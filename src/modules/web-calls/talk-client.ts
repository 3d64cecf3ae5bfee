// The talk client (served as /talk/talk.js): the /talk page's script, and the widget a business puts
// on its own site with a <script> and a button. Plain browser JavaScript, kept as a string; no
// inline script, no eval, nothing from another origin, so it runs under the pages' strict CSP.
export const TALK_CLIENT_JS = `'use strict';
(() => {
  const script = document.currentScript;
  const gateway = new URL(script ? script.src : location.href).origin;
  const PROTOCOL = 'gateway-talk.v1';
  const WORDS = {
    idle: 'Press the button, then allow the microphone.',
    asking: 'Asking for the microphone…',
    connecting: 'Connecting…',
    live: 'Connected: speak now.',
    denied: 'The microphone is blocked, so the agent cannot hear you. Allow this site to use the microphone (the icon at the left of the address bar), then press the button again.',
    missing: 'No microphone was found. Plug one in, then press the button again.',
    unsupported: 'This browser cannot capture audio here (it needs a secure page, https or localhost).',
    refused: 'This call link was already used, has expired, or may not be used on this site. Ask for a new one.',
    ended: 'The call has ended.',
    failed: 'The call was cut off.',
    noToken: 'This page opens a web call from its link (…/talk#token=…): ask for a new link.',
  };

  function microphoneProblem(error) {
    const name = error && error.name;
    if (name === 'NotAllowedError' || name === 'SecurityError' || name === 'PermissionDeniedError') return WORDS.denied;
    if (name === 'NotFoundError' || name === 'OverconstrainedError') return WORDS.missing;
    return WORDS.unsupported;
  }

  /** One call: the microphone, the worklet, the socket. \`ui\` shows what happens. */
  async function talk(token, ui, echoCancellation) {
    ui.state('asking', WORDS.asking);
    if (!navigator.mediaDevices || !window.AudioWorkletNode) return ui.state('failed', WORDS.unsupported);
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation, noiseSuppression: false, autoGainControl: false } });
    } catch (error) {
      return ui.state('failed', microphoneProblem(error));
    }
    ui.state('connecting', WORDS.connecting);
    const context = new AudioContext();
    await context.audioWorklet.addModule(gateway + '/talk/worklet.js');
    const capture = new AudioWorkletNode(context, 'talk-capture', { numberOfOutputs: 1 });
    const mute = context.createGain();
    mute.gain.value = 0;
    context.createMediaStreamSource(stream).connect(capture).connect(mute).connect(context.destination);
    const playback = new AudioWorkletNode(context, 'talk-playback', { numberOfInputs: 0, numberOfOutputs: 1, outputChannelCount: [1] });
    playback.connect(context.destination);
    const socket = new WebSocket(gateway.replace(/^http/, 'ws') + '/talk/socket', [PROTOCOL, token]);
    socket.binaryType = 'arraybuffer';
    let opened = false;
    let played = 0;
    const send = (data) => socket.readyState === WebSocket.OPEN && socket.send(data);
    capture.port.onmessage = (event) => send(event.data);
    playback.port.onmessage = (event) => {
      if (event.data.mark !== undefined) send(JSON.stringify({ type: 'mark', name: event.data.mark }));
      if (event.data.played) ui.played((played += event.data.played));
    };
    socket.onopen = () => {
      opened = true;
    };
    socket.onmessage = (event) => {
      if (typeof event.data !== 'string') return playback.port.postMessage({ audio: new Uint8Array(event.data) });
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (message.type === 'mark') playback.port.postMessage({ mark: String(message.name) });
      else if (message.type === 'clear') playback.port.postMessage({ clear: true });
      else if (message.type === 'transcript') ui.line(message.role === 'caller' ? 'caller' : 'agent', String(message.text));
      else if (message.type === 'ready') ui.state('live', WORDS.live, String(message.callId));
    };
    socket.onclose = (event) => {
      stream.getTracks().forEach((track) => track.stop());
      context.close();
      if (!opened) ui.state('failed', WORDS.refused);
      else ui.state('ended', event.code === 1000 || event.code === 1005 ? WORDS.ended : WORDS.failed);
    };
    return {
      hangup() {
        send(JSON.stringify({ type: 'hangup' }));
        socket.close(1000);
      },
    };
  }

  /** The status line, the transcript and the state attributes (data-state, data-call-id, data-played-ms) of one call's panel. */
  function panelUi(root, status, transcript) {
    return {
      state(state, words, callId) {
        root.dataset.state = state;
        if (callId) root.dataset.callId = callId;
        status.textContent = words;
      },
      line(role, text) {
        const item = document.createElement('li');
        item.dataset.role = role;
        item.textContent = (role === 'caller' ? 'You: ' : 'Agent: ') + text;
        transcript.appendChild(item);
      },
      played(ms) {
        root.dataset.playedMs = String(Math.round(ms));
      },
    };
  }

  function wire(button, tokenOf, ui, labels, echoCancellation) {
    let call = null;
    button.addEventListener('click', async () => {
      if (call) {
        call.hangup();
        return;
      }
      const token = tokenOf();
      if (!token) return ui.state('failed', WORDS.noToken);
      button.disabled = true;
      call = (await talk(token, ui, echoCancellation)) || null;
      button.disabled = false;
      if (call) button.textContent = labels.hangup;
    });
    return (state) => {
      if (state === 'ended' || state === 'failed') {
        call = null;
        button.textContent = labels.start;
      }
    };
  }

  // The /talk page: the token is in the fragment (never sent to a server), taken out of the address bar at once.
  // Echo cancellation is on (speakers heard by the microphone would talk over the agent); \`echo=off\` in the
  // fragment, or data-echo-cancellation="off" on a widget's button, turns it off for a headset.
  const page = document.getElementById('talk');
  if (page) {
    const fragment = new URLSearchParams(location.hash.slice(1));
    const token = fragment.get('token');
    if (token) history.replaceState(null, '', location.pathname);
    const button = document.getElementById('talk-button');
    const ui = panelUi(page, document.getElementById('talk-status'), document.getElementById('talk-transcript'));
    const reset = wire(button, () => token, { state: (s, w, c) => (ui.state(s, w, c), reset(s)), line: ui.line, played: ui.played }, { start: 'Start talking', hangup: 'Hang up' }, fragment.get('echo') !== 'off');
    ui.state('idle', token ? WORDS.idle : WORDS.noToken);
  }

  // The widget: every <button data-gateway-talk data-token="wct_…"> on the page opens a call, its panel after it.
  for (const button of document.querySelectorAll('button[data-gateway-talk]')) {
    const root = document.createElement('div');
    root.className = 'gateway-talk';
    const status = document.createElement('p');
    const transcript = document.createElement('ol');
    root.append(status, transcript);
    button.after(root);
    const ui = panelUi(root, status, transcript);
    const start = button.textContent || 'Talk to us';
    const reset = wire(button, () => button.dataset.token, { state: (s, w, c) => (ui.state(s, w, c), reset(s)), line: ui.line, played: ui.played }, { start, hangup: 'Hang up' }, button.dataset.echoCancellation !== 'off');
  }
})();
`;
