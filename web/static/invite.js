// invite.js: accepting an invitation (POST /api/invitations/accept) shows
// the participant's token once and signs the browser in.
import {$, api, setSession, t, showError} from 'taikai/app.js';

const code = decodeURIComponent(location.pathname.replace(/^\/invite\//, ''));

$('#invite-accept').addEventListener('click', async () => {
  const button = $('#invite-accept');
  button.disabled = true;
  $('#invite-error').textContent = '';
  try {
    const r = await api('/api/invitations/accept', {method: 'POST', body: {code}});
    setSession({admin: false, participant: r.participant});
    $('#invite-welcome').textContent = t('invite.welcome', {name: r.participant.name});
    $('#invite-token').textContent = r.token;
    $('#invite-done').hidden = false;
    button.hidden = true;
    $('#invite-copy').focus();
  } catch (err) {
    showError($('#invite-error'), err);
    button.disabled = false;
  }
});

// The token is long and shown once: copied with one click, or, where the
// browser refuses the clipboard, selected for the reader to copy.
$('#invite-copy').addEventListener('click', async () => {
  const token = $('#invite-token');
  try {
    await navigator.clipboard.writeText(token.textContent);
    $('#invite-copied').textContent = t('invite.copied');
  } catch {
    getSelection().selectAllChildren(token);
    $('#invite-copied').textContent = t('invite.selected');
  }
});
