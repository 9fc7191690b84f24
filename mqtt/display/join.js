// The "join" element: on a table served to the LAN (`tidetower display --lan`), the page's
// address and its QR code, for the other players' phones. Nothing when it is not.
"use strict";

async function showJoin() {
  if (!location.protocol.startsWith("http")) return;
  let served;
  try { served = await (await fetch("config.json")).json(); } catch (error) { return; }
  if (!served.join_url) return;
  const join = document.createElement("details");
  join.id = "join";
  join.className = "join";
  join.innerHTML = '<summary>Join</summary><img src="qr.svg" alt=""><p></p>';
  join.querySelector("img").alt = `QR code of ${served.join_url}`;
  join.querySelector("p").textContent = served.join_url;
  document.querySelector("header").append(join);
}

showJoin();
