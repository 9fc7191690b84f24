// A small MQTT 3.1.1 client over WebSockets for the display page: CONNECT, SUBSCRIBE,
// PUBLISH at QoS 0 and 1, PUBACK both ways, PINGREQ; reconnects with back-off.
"use strict";

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

function mqttString(text) {
  const bytes = utf8.encode(text);
  return [bytes.length >> 8, bytes.length & 255, ...bytes];
}

function remainingLength(n) {
  const out = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 128;
    out.push(byte);
  } while (n > 0);
  return out;
}

function packet(first, body) {
  return new Uint8Array([first, ...remainingLength(body.length), ...body]);
}

// 128 random bits after `prefix`: a guest can neither guess the id nor read it anywhere (it
// goes in the CONNECT only), so none can take the connection over by connecting with it.
function secretId(prefix) {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return prefix + Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

class MqttSocket {
  constructor(url, options) {
    this.url = url;
    this.options = Object.assign({ keepalive: 30 }, options);
    this.filters = new Map();
    this.acks = new Map();
    this.nextId = 1;
    this.buffer = new Uint8Array(0);
    this.delay = 500;
    this.connected = false;
  }

  connect() {
    this.clientId = this.options.clientId || secretId("display-");  // afresh on every connect
    this.ws = new WebSocket(this.url, ["mqtt"]);
    this.ws.binaryType = "arraybuffer";
    this.ws.onopen = () => this.ws.send(this.connectPacket());
    this.ws.onmessage = (event) => this.feed(new Uint8Array(event.data));
    this.ws.onclose = () => this.closed();
    this.ws.onerror = () => {};
  }

  connectPacket() {
    const { username, password, keepalive } = this.options;
    const clientId = this.clientId;
    let flags = 0x02; // clean session: the page reads the retained state on every connect
    const payload = [...mqttString(clientId)];
    if (username) { flags |= 0x80; payload.push(...mqttString(username)); }
    if (username && password) { flags |= 0x40; payload.push(...mqttString(password)); }
    const header = [...mqttString("MQTT"), 4, flags, keepalive >> 8, keepalive & 255];
    return packet(0x10, [...header, ...payload]);
  }

  closed() {
    const was = this.connected;
    this.connected = false;
    clearInterval(this.pinger);
    this.buffer = new Uint8Array(0);
    if ((was || this.delay === 500) && !this.refused) this.state("offline");  // "refused" stays
    this.retry = setTimeout(() => this.connect(), this.delay);
    this.delay = Math.min(this.delay * 2, 10000);
  }

  close() {  // for good: no reconnect and no ping from this socket any more
    clearTimeout(this.retry);
    clearInterval(this.pinger);
    if (this.ws) { this.ws.onclose = null; this.ws.close(); }
  }

  state(name, detail) { if (this.options.onState) this.options.onState(name, detail); }

  feed(bytes) {
    const joined = new Uint8Array(this.buffer.length + bytes.length);
    joined.set(this.buffer);
    joined.set(bytes, this.buffer.length);
    this.buffer = joined;
    for (;;) {
      let length = 0, multiplier = 1, at = 1, byte;
      do {
        if (at >= this.buffer.length) return;
        byte = this.buffer[at++];
        length += (byte & 127) * multiplier;
        multiplier *= 128;
      } while (byte & 128);
      if (this.buffer.length < at + length) return;
      this.handle(this.buffer[0], this.buffer.subarray(at, at + length));
      this.buffer = this.buffer.slice(at + length);
    }
  }

  handle(first, body) {
    const type = first >> 4;
    if (type === 2) this.connack(body[1]);
    else if (type === 3) this.received(first, body);
    else if (type === 4) this.acked((body[0] << 8) | body[1]);
  }

  connack(code) {
    this.refused = code !== 0;
    if (code !== 0) { this.state("refused", code); return; }
    this.connected = true;
    this.delay = 500;
    this.state("online");
    for (const [filter, qos] of this.filters) this.sendSubscribe(filter, qos);
    const every = this.options.keepalive * 500;
    this.pinger = setInterval(() => this.ws.send(new Uint8Array([0xc0, 0])), every);
  }

  received(first, body) {
    const qos = (first >> 1) & 3;
    const topicLength = (body[0] << 8) | body[1];
    const topic = fromUtf8.decode(body.subarray(2, 2 + topicLength));
    let at = 2 + topicLength;
    if (qos > 0) {
      const id = (body[at] << 8) | body[at + 1];
      at += 2;
      this.ws.send(packet(0x40, [id >> 8, id & 255]));
    }
    const payload = fromUtf8.decode(body.subarray(at));
    if (this.options.onMessage) this.options.onMessage(topic, payload, Boolean(first & 1));
  }

  acked(id) {
    const done = this.acks.get(id);
    this.acks.delete(id);
    if (done) done();
  }

  packetId() {
    const id = this.nextId;
    this.nextId = id === 65535 ? 1 : id + 1;
    return id;
  }

  subscribe(filter, qos = 1) {
    this.filters.set(filter, qos);
    if (this.connected) this.sendSubscribe(filter, qos);
  }

  sendSubscribe(filter, qos) {
    const id = this.packetId();
    this.ws.send(packet(0x82, [id >> 8, id & 255, ...mqttString(filter), qos]));
  }

  publish(topic, text, qos = 1) {
    if (!this.connected) return Promise.reject(new Error("not connected to the broker"));
    const head = mqttString(topic);
    const body = utf8.encode(text);
    if (qos === 0) {
      this.ws.send(packet(0x30, [...head, ...body]));
      return Promise.resolve();
    }
    const id = this.packetId();
    return new Promise((resolve) => {
      this.acks.set(id, resolve);
      this.ws.send(packet(0x32, [...head, id >> 8, id & 255, ...body]));
    });
  }
}

window.MqttSocket = MqttSocket;
window.secretId = secretId;
