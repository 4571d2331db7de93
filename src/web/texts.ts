/**
 * Labels of the login UI. English is complete and the fallback for any key another language lacks.
 * The page language is the first of `ui_locales`, then of Accept-Language, that the instance allows
 * (its restricted languages) and that has texts here; else the instance's default language; else English.
 */
const en = {
  title: "Sign in",
  loginName: "Login name",
  password: "Password",
  next: "Next",
  signIn: "Sign in",
  wrongCredentials: "The login name or password is wrong, or the account cannot sign in. Check them, or ask your administrator.",
  tooManyRequests: "Too many attempts from your network. Please wait a moment and try again.",
  chooseAccount: "Choose an account",
  otherAccount: "Use another account",
  signedInAs: "Signed in as",
  changePassword: "Change your password",
  changePasswordIntro: "You need a new password before you continue.",
  newPassword: "New password",
  confirmPassword: "Confirm the new password",
  passwordsDiffer: "The passwords do not match.",
  save: "Save",
  register: "Register",
  registerTitle: "Create an account",
  givenName: "Given name",
  familyName: "Family name",
  email: "E-mail",
  usernameTaken: "This login name is taken.",
  logout: "Sign out",
  logoutConfirm: "Sign out of every account in this browser?",
  loggedOut: "You are signed out.",
  csrf: "The form expired or was not sent from this site. Go back, reload the page and try again.",
  notFound: "This page does not exist.",
  badRequest: "The form or link contains characters that are not allowed. Go back and try again.",
  back: "Back",
  otpTitle: "Authenticator code",
  otpIntro: "Enter the 6-digit code from your authenticator app.",
  otpCode: "Code",
  otpWrong: "The code is not valid. Try the current one.",
  otpSetup: "Set up an authenticator app",
  otpSetupIntro: "Scan the QR code with your authenticator app, or enter the key, then enter the code it shows.",
  otpSecret: "Key",
  otpAdded: "The authenticator app is set up. Sign-ins now ask for its code.",
  mfaSkip: "Skip for now",
  mfaUnavailable: "Your organisation requires a second factor, but none is available. Ask your administrator.",
};

export type TextKey = keyof typeof en;
export type Texts = Record<TextKey, string>;

const de: Partial<Texts> = {
  title: "Anmelden",
  loginName: "Loginname",
  password: "Passwort",
  next: "Weiter",
  signIn: "Anmelden",
  wrongCredentials: "Loginname oder Passwort sind falsch, oder das Konto kann sich nicht anmelden. Prüfen Sie die Angaben oder fragen Sie Ihren Administrator.",
  tooManyRequests: "Zu viele Versuche aus Ihrem Netzwerk. Bitte warten Sie einen Moment und versuchen Sie es erneut.",
  chooseAccount: "Konto auswählen",
  otherAccount: "Anderes Konto verwenden",
  signedInAs: "Angemeldet als",
  changePassword: "Passwort ändern",
  changePasswordIntro: "Sie brauchen ein neues Passwort, bevor es weitergeht.",
  newPassword: "Neues Passwort",
  confirmPassword: "Neues Passwort bestätigen",
  passwordsDiffer: "Die Passwörter stimmen nicht überein.",
  save: "Speichern",
  register: "Registrieren",
  registerTitle: "Konto erstellen",
  givenName: "Vorname",
  familyName: "Nachname",
  email: "E-Mail",
  usernameTaken: "Dieser Loginname ist vergeben.",
  logout: "Abmelden",
  logoutConfirm: "Von allen Konten in diesem Browser abmelden?",
  loggedOut: "Sie sind abgemeldet.",
  csrf: "Das Formular ist abgelaufen oder kam nicht von dieser Seite. Gehen Sie zurück, laden Sie die Seite neu und versuchen Sie es noch einmal.",
  notFound: "Diese Seite gibt es nicht.",
  badRequest: "Das Formular oder der Link enthält unzulässige Zeichen. Gehen Sie zurück und versuchen Sie es noch einmal.",
  back: "Zurück",
  otpTitle: "Code der Authenticator-App",
  otpIntro: "Geben Sie den 6-stelligen Code aus Ihrer Authenticator-App ein.",
  otpCode: "Sicherheitscode",
  otpWrong: "Der Code ist nicht gültig. Versuchen Sie den aktuellen.",
  otpSetup: "Authenticator-App einrichten",
  otpSetupIntro: "Scannen Sie den QR-Code mit Ihrer Authenticator-App oder geben Sie den Schlüssel ein, dann den angezeigten Code.",
  otpSecret: "Schlüssel",
  otpAdded: "Die Authenticator-App ist eingerichtet. Anmeldungen fragen nun nach ihrem Code.",
  mfaSkip: "Später",
  mfaUnavailable: "Ihre Organisation verlangt einen zweiten Faktor, aber keiner ist verfügbar. Wenden Sie sich an Ihre Administration.",
};

const fr: Partial<Texts> = {
  title: "Connexion",
  loginName: "Identifiant",
  password: "Mot de passe",
  next: "Suivant",
  signIn: "Se connecter",
  wrongCredentials: "L'identifiant ou le mot de passe est incorrect, ou le compte ne peut pas se connecter. Vérifiez-les ou contactez votre administrateur.",
  tooManyRequests: "Trop de tentatives depuis votre réseau. Veuillez patienter un instant et réessayer.",
  chooseAccount: "Choisir un compte",
  otherAccount: "Utiliser un autre compte",
  signedInAs: "Connecté en tant que",
  changePassword: "Changer le mot de passe",
  newPassword: "Nouveau mot de passe",
  confirmPassword: "Confirmer le nouveau mot de passe",
  save: "Enregistrer",
  register: "S'inscrire",
  logout: "Se déconnecter",
  loggedOut: "Vous êtes déconnecté.",
  badRequest: "Le formulaire ou le lien contient des caractères non autorisés. Revenez en arrière et réessayez.",
  back: "Retour",
  changePasswordIntro: "Vous devez choisir un nouveau mot de passe avant de continuer.",
  passwordsDiffer: "Les mots de passe ne correspondent pas.",
  registerTitle: "Créer un compte",
  givenName: "Prénom",
  familyName: "Nom",
  email: "E-mail",
  usernameTaken: "Cet identifiant est déjà pris.",
  logoutConfirm: "Se déconnecter de tous les comptes dans ce navigateur ?",
  csrf: "Le formulaire a expiré ou n'a pas été envoyé depuis ce site. Revenez en arrière, rechargez la page et réessayez.",
  notFound: "Cette page n'existe pas.",
  otpTitle: "Code de l'application d'authentification",
  otpIntro: "Saisissez le code à 6 chiffres de votre application d'authentification.",
  otpCode: "Code de sécurité",
  otpWrong: "Le code n'est pas valide. Essayez le code actuel.",
  otpSetup: "Configurer une application d'authentification",
  otpSetupIntro: "Scannez le QR code avec votre application d'authentification, ou saisissez la clé, puis le code affiché.",
  otpSecret: "Clé",
  otpAdded: "L'application d'authentification est configurée. Les connexions demandent désormais son code.",
  mfaSkip: "Plus tard",
  mfaUnavailable: "Votre organisation exige un second facteur, mais aucun n'est disponible. Contactez votre administrateur.",
};

const translations: Record<string, Partial<Texts>> = { en, de, fr };
export const translatedLanguages = Object.keys(translations);

export function textsFor(language: string): Texts {
  return { ...en, ...(translations[language] ?? {}) };
}

/** Language tags in order of preference from `ui_locales` ("de-CH fr") or Accept-Language ("de-CH,de;q=0.9,en;q=0.5"). */
export function preferredLanguages(uiLocales: string | undefined, acceptLanguage: string | undefined): string[] {
  const fromUi = (uiLocales ?? "").split(/\s+/).filter(Boolean);
  const fromHeader = (acceptLanguage ?? "")
    .split(",")
    .map((part, i) => {
      const [tag, ...params] = part.trim().split(";");
      const q = Number(
        params
          .find((p) => p.trim().startsWith("q="))
          ?.trim()
          .slice(2) ?? "1",
      );
      return { tag: tag!.trim(), q: Number.isFinite(q) ? q : 0, i };
    })
    .filter((x) => x.tag && x.tag !== "*" && x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i)
    .map((x) => x.tag);
  return [...fromUi, ...fromHeader].map((t) => t.toLowerCase().split("-")[0]!);
}

/** The page language: the first preferred one the instance allows and the UI has texts for. */
export function chooseLanguage(preferred: string[], allowed: string[], instanceDefault: string): string {
  const usable = (l: string) => allowed.includes(l) && translatedLanguages.includes(l);
  return preferred.find(usable) ?? (usable(instanceDefault) ? instanceDefault : "en");
}
