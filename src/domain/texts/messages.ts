/**
 * The messages the server sends, per language (the login UI's languages: a test checks that each has every
 * message). `{name}`, `{code}`, `{link}`, `{minutes}` (and `{username}`, the new one, in domainClaimed) are filled in when sent. The text settings override the
 * subject and text of each per language and context.
 */
export type MessageKind = "verifyEmail" | "verifyPhone" | "initPassword" | "resetPassword" | "unlockUser" | "otpEmail" | "otpSms" | "domainClaimed";

export interface Template {
  subject: string;
  /** Plain text; the HTML part is derived from it (escaped, the link made clickable). */
  text: string;
}

export type Catalogue = Record<MessageKind, Template>;

const en: Catalogue = {
  verifyEmail: {
    subject: "Verify your e-mail address",
    text: "Hello {name},\n\nyour code is {code}. Enter it, or open this link to verify your e-mail address:\n{link}\n\nThe code is valid for {minutes} minutes. If you did not ask for it, ignore this message.",
  },
  verifyPhone: {
    subject: "Verify your phone number",
    text: "Your verification code is {code}. It is valid for {minutes} minutes.",
  },
  initPassword: {
    subject: "Set up your account",
    text: "Hello {name},\n\nan account was created for you. Open this link to verify your e-mail address and choose your password:\n{link}\n\nThe link works once, for {minutes} minutes.",
  },
  resetPassword: {
    subject: "Reset your password",
    text: "Hello {name},\n\nsomeone asked to reset the password of your account. Open this link to choose a new one:\n{link}\n\nThe link works once, for {minutes} minutes. If you did not ask for it, ignore this message: your password stays as it is.",
  },
  unlockUser: {
    subject: "Your account is locked",
    text: "Hello {name},\n\nyour account was locked after too many wrong passwords. If that was you, open this link to unlock it:\n{link}\n\nThe link works once, for {minutes} minutes. If it was not you, someone tried to guess your password: consider changing it.",
  },
  otpEmail: {
    subject: "Your sign-in code",
    text: "Hello {name},\n\nyour sign-in code is {code}. It is valid for {minutes} minutes. If you are not signing in, someone knows your password: change it.",
  },
  otpSms: {
    subject: "Your sign-in code",
    text: "Your sign-in code is {code}. It is valid for {minutes} minutes.",
  },
  domainClaimed: {
    subject: "Your username has changed",
    text: "Hello {name},\n\nthe organisation that owns the domain of your username has verified it, so your username was changed to {username}. Sign in with it from now on; you can choose another one in your account.",
  },
};

const de: Catalogue = {
  verifyEmail: {
    subject: "Bestätigen Sie Ihre E-Mail-Adresse",
    text: "Hallo {name},\n\nIhr Code lautet {code}. Geben Sie ihn ein oder öffnen Sie diesen Link, um Ihre E-Mail-Adresse zu bestätigen:\n{link}\n\nDer Code ist {minutes} Minuten gültig. Wenn Sie ihn nicht angefordert haben, ignorieren Sie diese Nachricht.",
  },
  verifyPhone: {
    subject: "Bestätigen Sie Ihre Telefonnummer",
    text: "Ihr Bestätigungscode lautet {code}. Er ist {minutes} Minuten gültig.",
  },
  initPassword: {
    subject: "Richten Sie Ihr Konto ein",
    text: "Hallo {name},\n\nfür Sie wurde ein Konto erstellt. Öffnen Sie diesen Link, um Ihre E-Mail-Adresse zu bestätigen und Ihr Passwort zu wählen:\n{link}\n\nDer Link funktioniert einmal, {minutes} Minuten lang.",
  },
  resetPassword: {
    subject: "Passwort zurücksetzen",
    text: "Hallo {name},\n\njemand hat verlangt, das Passwort Ihres Kontos zurückzusetzen. Öffnen Sie diesen Link, um ein neues zu wählen:\n{link}\n\nDer Link funktioniert einmal, {minutes} Minuten lang. Wenn Sie das nicht verlangt haben, ignorieren Sie diese Nachricht: Ihr Passwort bleibt, wie es ist.",
  },
  unlockUser: {
    subject: "Ihr Konto ist gesperrt",
    text: "Hallo {name},\n\nIhr Konto wurde nach zu vielen falschen Passwörtern gesperrt. Wenn Sie das waren, öffnen Sie diesen Link, um es zu entsperren:\n{link}\n\nDer Link funktioniert einmal, {minutes} Minuten lang. Wenn Sie es nicht waren, hat jemand versucht, Ihr Passwort zu erraten: Ändern Sie es am besten.",
  },
  otpEmail: {
    subject: "Ihr Anmeldecode",
    text: "Hallo {name},\n\nIhr Anmeldecode lautet {code}. Er ist {minutes} Minuten gültig. Wenn Sie sich nicht gerade anmelden, kennt jemand Ihr Passwort: Ändern Sie es.",
  },
  otpSms: {
    subject: "Ihr Anmeldecode",
    text: "Ihr Anmeldecode lautet {code}. Er ist {minutes} Minuten gültig.",
  },
  domainClaimed: {
    subject: "Ihr Benutzername wurde geändert",
    text: "Hallo {name},\n\ndie Organisation, der die Domain Ihres Benutzernamens gehört, hat sie bestätigt. Ihr Benutzername wurde daher in {username} geändert. Melden Sie sich ab jetzt damit an; in Ihrem Konto können Sie einen anderen wählen.",
  },
};

const fr: Catalogue = {
  verifyEmail: {
    subject: "Vérifiez votre adresse e-mail",
    text: "Bonjour {name},\n\nvotre code est {code}. Saisissez-le, ou ouvrez ce lien pour vérifier votre adresse e-mail :\n{link}\n\nLe code est valable {minutes} minutes. Si vous ne l'avez pas demandé, ignorez ce message.",
  },
  verifyPhone: {
    subject: "Vérifiez votre numéro de téléphone",
    text: "Votre code de vérification est {code}. Il est valable {minutes} minutes.",
  },
  initPassword: {
    subject: "Configurez votre compte",
    text: "Bonjour {name},\n\nun compte a été créé pour vous. Ouvrez ce lien pour vérifier votre adresse e-mail et choisir votre mot de passe :\n{link}\n\nLe lien fonctionne une seule fois, pendant {minutes} minutes.",
  },
  resetPassword: {
    subject: "Réinitialisez votre mot de passe",
    text: "Bonjour {name},\n\nquelqu'un a demandé la réinitialisation du mot de passe de votre compte. Ouvrez ce lien pour en choisir un nouveau :\n{link}\n\nLe lien fonctionne une seule fois, pendant {minutes} minutes. Si vous ne l'avez pas demandé, ignorez ce message : votre mot de passe reste inchangé.",
  },
  unlockUser: {
    subject: "Votre compte est bloqué",
    text: "Bonjour {name},\n\nvotre compte a été bloqué après trop de mots de passe erronés. Si c'était vous, ouvrez ce lien pour le débloquer :\n{link}\n\nLe lien fonctionne une seule fois, pendant {minutes} minutes. Si ce n'était pas vous, quelqu'un a tenté de deviner votre mot de passe : pensez à le changer.",
  },
  otpEmail: {
    subject: "Votre code de connexion",
    text: "Bonjour {name},\n\nvotre code de connexion est {code}. Il est valable {minutes} minutes. Si vous n'êtes pas en train de vous connecter, quelqu'un connaît votre mot de passe : changez-le.",
  },
  otpSms: {
    subject: "Votre code de connexion",
    text: "Votre code de connexion est {code}. Il est valable {minutes} minutes.",
  },
  domainClaimed: {
    subject: "Votre nom d'utilisateur a changé",
    text: "Bonjour {name},\n\nl'organisation à qui appartient le domaine de votre nom d'utilisateur l'a vérifié : votre nom d'utilisateur est désormais {username}. Connectez-vous avec lui à partir de maintenant ; vous pouvez en choisir un autre dans votre compte.",
  },
};

export const messageCatalogues: Record<string, Catalogue> = { en, de, fr };
