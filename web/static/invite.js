// invite.js: accepting an invitation (POST /api/invitations/accept) shows
// the participant's token once and signs the browser in.
import {$, api, fmt, setSession} from 'taikai/app.js';

// TEXT: every sentence this file shows (for the translation catalog).
const TEXT = {
  welcome: 'Welcome, {name}: you are signed in.',
};

const code = decodeURIComponent(location.pathname.replace(/^\/invite\//, ''));

$('#invite-accept').addEventListener('click', async () => {
  const button = $('#invite-accept');
  button.disabled = true;
  $('#invite-error').textContent = '';
  try {
    const r = await api('/api/invitations/accept', {method: 'POST', body: {code}});
    setSession({admin: false, participant: r.participant});
    $('#invite-welcome').textContent = fmt(TEXT.welcome, {name: r.participant.name});
    $('#invite-token').textContent = r.token;
    $('#invite-done').hidden = false;
    button.hidden = true;
  } catch (err) {
    $('#invite-error').textContent = err.message;
    button.disabled = false;
  }
});
